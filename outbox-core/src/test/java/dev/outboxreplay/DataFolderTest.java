package dev.outboxreplay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataFolderTest {
  private static final Path HOME = Path.of("/home/ann");

  @TempDir Path dir;

  @Test
  void eachSystemGetsItsOwnPerUserFolder() {
    assertThat(DataFolder.resolve("Notes", "Windows 11",
        Map.of("LOCALAPPDATA", "/c/Users/ann/AppData/Local", "APPDATA", "/roaming"), HOME))
        .isEqualTo(Path.of("/c/Users/ann/AppData/Local/Notes"));
    assertThat(DataFolder.resolve("Notes", "Windows 10", Map.of(), HOME))
        .isEqualTo(HOME.resolve("AppData/Local/Notes"));
    assertThat(DataFolder.resolve("Notes", "Mac OS X", Map.of("XDG_DATA_HOME", "/x"), HOME))
        .isEqualTo(HOME.resolve("Library/Application Support/Notes"));
    assertThat(DataFolder.resolve("Notes", "Linux", Map.of("XDG_DATA_HOME", "/data/ann"), HOME))
        .isEqualTo(Path.of("/data/ann/Notes"));
    assertThat(DataFolder.resolve("Notes", "Linux", Map.of(), HOME))
        .isEqualTo(HOME.resolve(".local/share/Notes"));
    assertThat(DataFolder.resolve("Notes", "Linux", Map.of("XDG_DATA_HOME", "relative/x"), HOME))
        .as("a relative XDG_DATA_HOME is ignored, as the XDG rules say")
        .isEqualTo(HOME.resolve(".local/share/Notes"));
  }

  @Test
  void aNameThatIsNoPlainFolderNameIsRefused() {
    for (String bad : new String[] {"", " ", "..", ".", "a/b", "a\\b", "C:x", "tab\there",
        " lead", "x".repeat(101)}) {
      assertThatThrownBy(() -> DataFolder.resolve(bad, "Linux", Map.of(), HOME))
          .as("\"%s\"", bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("plain folder name");
    }
    assertThatThrownBy(() -> DataFolder.resolve(null, "Linux", Map.of(), HOME))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void theFolderIsMadeOwnerOnlyAndAnOpenOneIsNarrowed() throws Exception {
    Path made = DataFolder.ensureOwnerOnly(dir.resolve("share").resolve("Notes"));
    assertThat(made).isDirectory();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(made)))
        .isEqualTo("rwx------");

    Path open = Files.createDirectory(dir.resolve("Open"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    DataFolder.ensureOwnerOnly(open);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(open)))
        .isEqualTo("rwx------");

    Path file = Files.writeString(dir.resolve("file"), "x");
    assertThatThrownBy(() -> DataFolder.ensureOwnerOnly(file))
        .hasMessageContaining("cannot make the data folder");
  }

  @Test
  void theRunningSystemsFolderIsUnderTheUsersHome() {
    // resolves only; making it would write into the real home
    Path folder = DataFolder.resolve("outbox-replay-test", System.getProperty("os.name"),
        Map.of(), Path.of(System.getProperty("user.home")));
    assertThat(folder.startsWith(Path.of(System.getProperty("user.home")))).isTrue();
    assertThat(folder.getFileName()).isEqualTo(Path.of("outbox-replay-test"));
  }
}

package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.h2.store.fs.FilePath;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link OpenJournal} through the channel H2 gets from {@link RecoveringFileSystem}: writes in
 * place, appends and a truncation are all undone, writes after the journal ended are not, and a
 * file locked by someone else is left alone.
 */
class OpenJournalTest {
  @TempDir Path dir;

  @Test
  void undoPutsBackOverwrittenBytesAndCutsWhatWasAppended() throws Exception {
    Path file = dir.resolve("journaled.mv.db");
    byte[] original = randomBytes(3 * 4096);
    Files.write(file, original);
    OpenJournal journal = OpenJournal.begin(file);
    assertThat(OpenJournal.begin(file)).as("a second journal of the same file").isNull();
    try (FileChannel channel = h2Channel(file)) {
      assertThat(journal.wroteSomething()).isFalse();
      channel.write(ascii("new store header"), 0);
      channel.position(4096 + 100);
      channel.write(ascii("relative write in the middle"));
      channel.write(ByteBuffer.wrap(randomBytes(8192)), original.length - 10); // over the end
      channel.truncate(original.length + 4096);
      channel.truncate(4096); // cuts bytes of the original
      channel.write(ByteBuffer.wrap(randomBytes(4096)), 4096);
    }
    assertThat(journal.wroteSomething()).isTrue();
    assertThat(journal.undo()).isTrue();
    journal.close();
    assertThat(Files.readAllBytes(file)).isEqualTo(original);

    try (FileChannel channel = h2Channel(file)) {
      channel.write(ascii("after the journal ended"), 0);
    }
    assertThat(Files.readAllBytes(file)).isNotEqualTo(original);
  }

  @Test
  void aFileLockedElsewhereIsNotUndone() throws Exception {
    Path file = dir.resolve("locked.mv.db");
    byte[] original = randomBytes(4096);
    Files.write(file, original);
    OpenJournal journal = OpenJournal.begin(file);
    try (FileChannel channel = h2Channel(file)) {
      channel.write(ascii("written while opening"), 0);
    }
    byte[] written = Files.readAllBytes(file);
    try (FileChannel other = FileChannel.open(file, StandardOpenOption.WRITE);
        FileLock lock = other.lock()) {
      assertThat(journal.undo()).as("undo while the file is locked").isFalse();
    } finally {
      journal.close();
    }
    assertThat(Files.readAllBytes(file)).isEqualTo(written);
  }

  /**
   * H2 keeps the channel it opened while the journal was active for as long as the file stays
   * open: once the journal ends, that channel's writes are no longer kept.
   */
  @Test
  void aChannelOpenedDuringTheOpenKeepsNothingOnceTheJournalEnds() throws Exception {
    Path file = dir.resolve("kept-open.mv.db");
    Files.write(file, randomBytes(4096));
    OpenJournal journal = OpenJournal.begin(file);
    try (FileChannel channel = h2Channel(file)) {
      channel.write(ascii("during the open"), 0);
      assertThat(journal.wroteSomething()).isTrue();
      journal.close();
      assertThat(journal.wroteSomething()).as("let go of at the end").isFalse();
      channel.write(ascii("after the open"), 100);
      assertThat(journal.wroteSomething()).as("a write after the end").isFalse();
    }
    assertThat(new String(Files.readAllBytes(file), 100, 14, StandardCharsets.US_ASCII))
        .isEqualTo("after the open");
  }

  private static FileChannel h2Channel(Path file) throws Exception {
    RecoveringFileSystem.register();
    return FilePath.get(RecoveringFileSystem.SCHEME + ":" + file).open("rw");
  }

  private static ByteBuffer ascii(String text) {
    return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
  }

  private static byte[] randomBytes(int n) {
    byte[] bytes = new byte[n];
    new Random(n).nextBytes(bytes);
    return bytes;
  }
}

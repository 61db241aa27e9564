package dev.outboxreplay.testkit;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * How {@link ChildJvm} starts its children cheaply: a JDK class-data archive (AppCDS) of the
 * classes a child loads, made once per test JVM, so that each child maps them instead of parsing
 * and verifying them again. The kill tests start a few hundred children a run; on 2 cores a child
 * that opens an H2 file and accepts one command measured 1.40 CPU-s without the archive and about
 * 1.05 with it.
 *
 * <p>The JDK refuses an archive for a class path with directories in it, so the class path's
 * directories ({@code target/classes} and the like) are packed into jars first. The archive is
 * made by a training child ({@link #main}) that loads every class of the class path except the
 * test frameworks' and exits normally ({@code -XX:ArchiveClassesAtExit}); it lives in a temporary
 * directory deleted when the test JVM exits. If anything in that fails, children run the class
 * path as it is; {@code -Dchildjvm.classData=false} turns the archive off (a module that starts
 * only a child or two saves less than the few seconds the archive takes). Children log the JVM's own warnings to stderr, never to the stdout the tests read.
 */
final class ChildClassData {
  /** Jars whose classes children do not run: the test frameworks. */
  private static final Pattern NOT_IN_CHILDREN = Pattern.compile(
      "(junit|opentest4j|apiguardian|assertj|byte-buddy|jazzer|awaitility|hamcrest|archunit"
          + "|jspecify|surefire|pitest)[^/\\\\]*\\.jar$");

  /** The options for children, made on the first call. */
  private static List<String> options;

  private ChildClassData() {}

  /** The {@code java} launcher of the running JDK. */
  static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /**
   * The options that give a child its classes: {@code -cp} and the archive. The first call makes
   * the archive (a few seconds, once per test JVM); later calls return at once. Without the
   * archive, or with {@code -Dchildjvm.classData=false}, the plain class path.
   */
  static synchronized List<String> options() {
    if (options == null) {
      List<String> plain = List.of("-cp", System.getProperty("java.class.path"));
      options = Boolean.parseBoolean(System.getProperty("childjvm.classData", "true"))
          ? make(plain) : plain;
    }
    return options;
  }

  private static List<String> make(List<String> plain) {
    String classPath = plain.get(1);
    long started = System.nanoTime();
    try {
      Path dir = Files.createTempDirectory("child-class-data-");
      deleteAtExit(dir);
      String jars = packDirectories(classPath, dir);
      Path archive = dir.resolve("classes.jsa");
      Path log = dir.resolve("training.log");
      Process training = new ProcessBuilder(java(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
          "-XX:ArchiveClassesAtExit=" + archive, "-Xlog:disable", "-Xlog:all=warning:stderr",
          "-cp", jars, ChildClassData.class.getName())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      if (!training.waitFor(120, TimeUnit.SECONDS)) {
        training.destroyForcibly();
        throw new IOException("the training child ran for more than 120 s");
      }
      if (training.exitValue() != 0 || !Files.isRegularFile(archive)) {
        throw new IOException("the training child exited with " + training.exitValue()
            + ":\n" + Files.readString(log));
      }
      System.out.printf("ChildJvm: class-data archive for children made in %d ms (%s)%n",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
          Files.readAllLines(log).stream().filter(line -> line.endsWith("not loadable"))
              .findFirst().orElse("?"));
      return List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:disable",
          "-Xlog:all=warning:stderr", "-cp", jars);
    } catch (IOException | RuntimeException e) {
      System.err.println("ChildJvm: children run without a class-data archive: " + e);
      return plain;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return plain;
    }
  }

  /** The class path with each directory replaced by a jar of its files, made in {@code dir}. */
  private static String packDirectories(String classPath, Path dir) throws IOException {
    List<String> entries = new ArrayList<>();
    for (String entry : classPath.split(File.pathSeparator)) {
      Path path = Path.of(entry);
      if (Files.isRegularFile(path)) {
        entries.add(entry);
      } else if (Files.isDirectory(path)) {
        Path jar = dir.resolve("classes-" + entries.size() + ".jar");
        if (pack(path, jar)) {
          entries.add(jar.toString());
        }
      }
    }
    return String.join(File.pathSeparator, entries);
  }

  /** Packs the files under {@code root} into {@code jar}; false when there were none. */
  private static boolean pack(Path root, Path jar) throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(root)) {
      files = walk.filter(Files::isRegularFile).sorted().toList();
    }
    if (files.isEmpty()) {
      return false;
    }
    try (OutputStream out = Files.newOutputStream(jar);
        JarOutputStream jarOut = new JarOutputStream(out)) {
      for (Path file : files) {
        jarOut.putNextEntry(new JarEntry(root.relativize(file).toString()
            .replace(File.separatorChar, '/')));
        Files.copy(file, jarOut);
        jarOut.closeEntry();
      }
    }
    return true;
  }

  private static void deleteAtExit(Path dir) {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try (Stream<Path> walk = Files.walk(dir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(path -> {
          try {
            Files.deleteIfExists(path);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
      } catch (IOException | UncheckedIOException ignored) {
        // a file left in target/ or the temp directory; nothing depends on it
      }
    }, "child-class-data-cleanup"));
  }

  /**
   * The training child: loads, without initializing, every class of the class path except the
   * test frameworks', then exits so that the JDK writes the archive.
   */
  public static void main(String[] args) throws IOException {
    ClassLoader loader = ChildClassData.class.getClassLoader();
    int loaded = 0;
    int refused = 0;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (NOT_IN_CHILDREN.matcher(entry).find()) {
        continue;
      }
      try (JarFile jar = new JarFile(entry)) {
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
          String name = e.nextElement().getName();
          if (!name.endsWith(".class") || name.startsWith("META-INF/") || name.contains("-")) {
            continue; // module-info, package-info and versioned entries are not classes to load
          }
          try {
            Class.forName(name.substring(0, name.length() - 6).replace('/', '.'), false, loader);
            loaded++;
          } catch (LinkageError | ClassNotFoundException notLoadable) {
            refused++; // refers to a class of an optional dependency that is not here
          }
        }
      }
    }
    System.out.println(loaded + " classes archived, " + refused + " not loadable");
  }
}

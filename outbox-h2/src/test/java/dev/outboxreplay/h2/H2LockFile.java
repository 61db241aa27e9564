package dev.outboxreplay.h2;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * What H2's lock file tells other processes in multi-process mode: the host and port of the
 * serving process's server, and the key that names the database to it ({@code id}).
 */
public record H2LockFile(String host, int port, String key) {
  /**
   * Reads {@code lockFile} ({@code <base>.lock.db}).
   *
   * @throws IOException when it cannot be read (none yet, or none any more)
   * @throws IllegalStateException when it names no server
   */
  public static H2LockFile read(Path lockFile) throws IOException {
    Properties lock = new Properties();
    try (Reader in = Files.newBufferedReader(lockFile)) {
      lock.load(in);
    }
    String server = lock.getProperty("server");
    if (server == null) {
      throw new IllegalStateException(lockFile + " names no server: " + lock);
    }
    int colon = server.lastIndexOf(':');
    return new H2LockFile(server.substring(0, colon),
        Integer.parseInt(server.substring(colon + 1)), lock.getProperty("id"));
  }

  /**
   * A JDBC URL that reaches the database through the serving process's server on loopback
   * (whatever host the lock file names: no other address is ever a target here).
   */
  public String loopbackUrl() {
    return "jdbc:h2:tcp://127.0.0.1:" + port + "/" + key;
  }
}

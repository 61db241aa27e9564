package dev.outboxreplay.h2.internal;

import dev.outboxreplay.OutboxStorageException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;

/**
 * Keeps H2's sockets on loopback. In multi-process mode ({@code AUTO_SERVER}) H2 opens a TCP
 * server for the other processes, and its socket file lock opens one more; both listen on the
 * address in the JVM-wide property {@code h2.bindAddress}, read once when H2's classes load, and
 * on every interface when it is unset. {@link #requestLoopback()} sets it to {@code 127.0.0.1}
 * unless the application set it; {@link #requireLoopback} refuses to open a file for other
 * processes when H2 was loaded before that with another address.
 */
public final class LocalOnly {
  public static final String BIND_ADDRESS_PROPERTY = "h2.bindAddress";

  private LocalOnly() {}

  /** Asks H2 to listen on loopback only; call before any H2 class loads. */
  public static void requestLoopback() {
    if (System.getProperty(BIND_ADDRESS_PROPERTY) == null) {
      System.setProperty(BIND_ADDRESS_PROPERTY, "127.0.0.1");
    }
  }

  /**
   * @throws OutboxStorageException naming {@code file} when H2 would listen beyond loopback
   */
  public static void requireLoopback(Path file) {
    String bound = org.h2.engine.SysProperties.BIND_ADDRESS;
    if (!isLoopback(bound)) {
      throw new OutboxStorageException("refusing to open " + file + " for other processes: H2 "
          + "would listen on " + (bound == null ? "every network interface" : bound) + ", not "
          + "on loopback only. H2 was loaded before the outbox library with "
          + BIND_ADDRESS_PROPERTY + (bound == null ? " unset" : "=" + bound) + "; start the JVM "
          + "with -D" + BIND_ADDRESS_PROPERTY + "=127.0.0.1, or open the file with "
          + "multiProcess(false)");
    }
  }

  static boolean isLoopback(String address) {
    if (address == null || address.isBlank()) {
      return false;
    }
    try {
      return InetAddress.getByName(address).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}

package dev.outboxreplay.h2.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Who holds an H2 file's lock file ({@code NAME.lock.db}), judged from outside H2: whether the
 * process that wrote it still runs. H2's own writable open takes over a lock whose owner is gone
 * (after 2 to 4 s), but its read-only open refuses any lock file ("Lock file exists", 90020), so
 * a process killed while it had the file open locked every read-only reader out for good.
 *
 * <p>The owner is gone when no other process holds the data file open (no lock on the {@code
 * .mv.db}, which the operating system drops when a process dies) and the lock file's own ways to
 * reach its owner are dead (this JVM's own sockets answer like any other process's): with H2's socket lock ({@code method=socket}, what the library writes) its lock
 * port and the port of the server it names both refuse a connection; with any other method, the
 * lock file has not changed for {@link #SETTLED} (an owner that is still opening writes it, then
 * locks the data file within milliseconds). Ports are only ever probed on loopback: a lock file
 * that names another address is reported as held. {@link #of} reads only; {@link #removeIfGone}
 * deletes a lock file judged gone, for a writable open.
 */
public final class LockOwner {
  /** How long a lock file without a port must stand unchanged before its owner counts as gone. */
  static final Duration SETTLED = Duration.ofSeconds(2);
  private static final int PROBE_TIMEOUT_MILLIS = 500;

  /** What a look at the lock file found. */
  public enum State {
    /** No lock file, and no process holds the data file. */
    NONE,
    /** A lock file whose owner is gone: it locks no one out. */
    GONE,
    /** A lock file whose owner runs (or may run: it could not be told). */
    HELD
  }

  /**
   * @param state what was found
   * @param description for messages: how the owner was judged, with the addresses probed
   * @param lockId the lock file's {@code id} (H2 makes a new one for each lock), or null
   * @param server where the owner serves the file to other processes, as H2's remote database
   *     name {@code host:port/key} on loopback; null when the lock names no server on loopback
   */
  public record Found(State state, String description, String lockId, String server) {
    Found(State state, String description) {
      this(state, description, null, null);
    }
  }

  private LockOwner() {}

  /** The lock file H2 uses for the data file {@code dataFile} ({@code NAME.mv.db}). */
  public static Path lockFileOf(Path dataFile) {
    String name = dataFile.getFileName().toString();
    String base = name.endsWith(".mv.db") ? name.substring(0, name.length() - ".mv.db".length())
        : name;
    return dataFile.resolveSibling(base + ".lock.db");
  }

  /** Looks at the lock file of {@code dataFile} now. */
  public static Found of(Path dataFile) {
    return of(dataFile, Instant.now());
  }

  static Found of(Path dataFile, Instant now) {
    Path lockFile = lockFileOf(dataFile);
    Properties lock = new Properties();
    Instant modified;
    try (InputStream in = Files.newInputStream(lockFile)) {
      modified = Files.getLastModifiedTime(lockFile).toInstant();
      lock.load(in);
    } catch (NoSuchFileException gone) {
      return FileCheck.lockedByAnotherProcess(dataFile)
          ? new Found(State.HELD, "a live process has it open and does not share it (it opened "
              + "it in single-process mode: no lock file)")
          : new Found(State.NONE, "no lock file");
    } catch (IOException | IllegalArgumentException unreadable) {
      return new Found(State.HELD, "its lock file " + lockFile + " cannot be read ("
          + unreadable.getClass().getSimpleName() + ")");
    }
    String id = lock.getProperty("id");
    InetSocketAddress serving = lock.getProperty("server") == null ? null
        : address(lock.getProperty("server"));
    String server = serving == null || id == null ? null
        : hostForUrl(serving) + ":" + serving.getPort() + "/" + id;
    if (FileCheck.lockedByAnotherProcess(dataFile)) {
      return new Found(State.HELD, "a live process holds it open (" + lockFile + ")", id, server);
    }
    List<InetSocketAddress> owner = new ArrayList<>();
    String ip = lock.getProperty("ipAddress");
    String port = lock.getProperty("port");
    if ("socket".equals(lock.getProperty("method")) && ip != null && port != null) {
      owner.add(address(ip + ":" + port));
    }
    if (lock.getProperty("server") != null) {
      owner.add(serving);
    }
    if (owner.isEmpty()) {
      boolean settled = !modified.isAfter(now.minus(SETTLED));
      return new Found(settled ? State.GONE : State.HELD, settled
          ? "its lock file " + lockFile + " names no port and its owner holds nothing"
          : "a process is opening or closing it (" + lockFile + " changed just now)");
    }
    for (InetSocketAddress address : owner) {
      if (address == null) {
        return new Found(State.HELD, "its lock file " + lockFile + " names an owner that is "
            + "not on loopback; it is not probed (another computer's process?)");
      }
      if (answers(address)) {
        return new Found(State.HELD, "the process that locked it runs: it answers at "
            + address.getHostString() + ":" + address.getPort() + " (" + lockFile + ")", id,
            server);
      }
    }
    return new Found(State.GONE, "the process that locked it is gone: nothing answers at "
        + describe(owner) + " (" + lockFile + ")", id, null);
  }

  /**
   * Deletes the lock file of {@code dataFile} when its owner is gone, so that a writable open
   * takes the file at once instead of after H2's own takeover (2 to 4 s: it waits for the lock
   * file to age). Only the lock judged gone is deleted: it is first moved aside, and put back
   * when what was moved is another lock (a process took the file over in between). Deleting a
   * lock never lets two processes write: each also locks the data file itself, which the
   * operating system keeps to one process.
   *
   * @return true when a stale lock file was deleted
   */
  public static boolean removeIfGone(Path dataFile) {
    Found found = of(dataFile);
    if (found.state() != State.GONE || found.lockId() == null) {
      return false;
    }
    Path lockFile = lockFileOf(dataFile);
    Path aside = lockFile.resolveSibling(lockFile.getFileName() + ".stale-"
        + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    try {
      Files.move(lockFile, aside, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException gone) {
      return false; // another opener took it first
    }
    try {
      Properties moved = new Properties();
      try (InputStream in = Files.newInputStream(aside)) {
        moved.load(in);
      }
      if (found.lockId().equals(moved.getProperty("id"))) {
        Files.delete(aside);
        return true;
      }
      if (!Files.exists(lockFile)) {
        Files.move(aside, lockFile, StandardCopyOption.ATOMIC_MOVE);
      } else {
        Files.delete(aside); // its owner's watchdog writes it again within a second
      }
    } catch (IOException | IllegalArgumentException e) {
      // what was moved aside cannot be read: leave it; H2's open decides about the lock file
    }
    return false;
  }

  /** A loopback address from {@code host:port}; null when the host is not loopback. */
  private static InetSocketAddress address(String hostAndPort) {
    int colon = hostAndPort.lastIndexOf(':');
    if (colon < 0) {
      return null;
    }
    try {
      InetAddress host = InetAddress.getByName(hostAndPort.substring(0, colon));
      int port = Integer.parseInt(hostAndPort.substring(colon + 1));
      return host.isLoopbackAddress() && port > 0 && port < 65_536
          ? new InetSocketAddress(host, port) : null;
    } catch (UnknownHostException | NumberFormatException e) {
      return null;
    }
  }

  /** The address's host as a URL takes it: an IPv6 literal in brackets. */
  private static String hostForUrl(InetSocketAddress address) {
    String host = address.getAddress().getHostAddress();
    return host.contains(":") ? "[" + host + "]" : host;
  }

  /** False only when the connection is refused: a timeout or other failure counts as alive. */
  private static boolean answers(InetSocketAddress address) {
    try (Socket socket = new Socket()) {
      socket.connect(address, PROBE_TIMEOUT_MILLIS);
      return true;
    } catch (ConnectException refused) {
      return false;
    } catch (IOException unclear) {
      return true;
    }
  }

  private static String describe(List<InetSocketAddress> addresses) {
    List<String> names = new ArrayList<>();
    for (InetSocketAddress a : addresses) {
      names.add(a.getHostString() + ":" + a.getPort());
    }
    return String.join(" or ", names);
  }
}

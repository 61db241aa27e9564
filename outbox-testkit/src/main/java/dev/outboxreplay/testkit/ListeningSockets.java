package dev.outboxreplay.testkit;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The TCP sockets a process listens on, read from Linux's {@code /proc}: the socket inodes among
 * the process's open file descriptors, matched against {@code /proc/net/tcp} and {@code tcp6}
 * rows in state LISTEN. Reads only; sends nothing to any address. For tests that check a process
 * listens on loopback only, or on nothing at all.
 */
public final class ListeningSockets {
  private ListeningSockets() {}

  /** A listening socket's local address and port. */
  public record Listener(InetAddress address, int port) {}

  /** Whether this machine has the {@code /proc} files this reads (Linux). */
  public static boolean available() {
    return Files.isReadable(Path.of("/proc/net/tcp")) && Files.isDirectory(Path.of("/proc/self/fd"));
  }

  /** The TCP sockets process {@code pid} listens on now. */
  public static List<Listener> of(long pid) throws IOException {
    Set<String> inodes = new HashSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            inodes.add(target.substring(8, target.length() - 1));
          }
        } catch (IOException closedMeanwhile) {
          // the descriptor went away while listing: not a listener
        }
      }
    }
    List<Listener> listeners = new ArrayList<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path path = Path.of(table);
      if (!Files.isReadable(path)) {
        continue;
      }
      List<String> lines = Files.readAllLines(path); // read once: sockets come and go
      for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
        String[] f = line.trim().split("\\s+");
        if (f.length > 9 && f[3].equals("0A") && inodes.contains(f[9])) { // 0A = LISTEN
          String[] local = f[1].split(":");
          listeners.add(new Listener(address(local[0]), Integer.parseInt(local[1], 16)));
        }
      }
    }
    return listeners;
  }

  /** /proc/net/tcp writes addresses as little-endian 32-bit words in hex. */
  private static InetAddress address(String hex) throws IOException {
    byte[] raw = new byte[hex.length() / 2];
    for (int word = 0; word < raw.length / 4; word++) {
      for (int b = 0; b < 4; b++) {
        int at = (word * 4 + 3 - b) * 2;
        raw[word * 4 + b] = (byte) new BigInteger(hex.substring(at, at + 2), 16).intValue();
      }
    }
    return InetAddress.getByAddress(raw);
  }
}

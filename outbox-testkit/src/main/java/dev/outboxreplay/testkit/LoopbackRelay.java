package dev.outboxreplay.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The network between a client and its receivers, on loopback: a TCP relay that passes each new
 * connection to the next receiver port in turn (to another when that one refuses: it was
 * killed), as a load balancer would, and never retries a request. {@link #down()} is a lost
 * network: relayed connections are cut and new ones closed at once, until {@link #up()}.
 */
public final class LoopbackRelay implements AutoCloseable {
  private final ServerSocket listening;
  private final AtomicIntegerArray ports;
  private final AtomicInteger next = new AtomicInteger();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean up = true;

  /** Starts relaying to {@code ports} of 127.0.0.1 (at least one). */
  public LoopbackRelay(int... ports) throws IOException {
    if (ports.length == 0) {
      throw new IllegalArgumentException("at least one port to relay to");
    }
    this.ports = new AtomicIntegerArray(ports);
    this.listening = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "loopback-relay");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** {@code http://127.0.0.1:{port}/}. */
  public String baseUrl() {
    return "http://127.0.0.1:" + listening.getLocalPort() + "/";
  }

  /** Receiver {@code index} now listens on {@code port} (it restarted). */
  public void moved(int index, int port) {
    ports.set(index, port);
  }

  /** The network is back. */
  public void up() {
    up = true;
  }

  /** The network is gone: relayed connections are cut, new ones closed at once. */
  public void down() {
    up = false;
    for (Socket s : open) {
      closeQuietly(s);
    }
  }

  private void acceptLoop() {
    while (!listening.isClosed()) {
      Socket client;
      try {
        client = listening.accept();
      } catch (IOException closed) {
        return;
      }
      if (!up) {
        closeQuietly(client);
        continue;
      }
      Socket target = null;
      int first = Math.floorMod(next.getAndIncrement(), ports.length());
      for (int i = 0; i < ports.length() && target == null; i++) {
        try {
          target = new Socket(InetAddress.getLoopbackAddress(),
              ports.get((first + i) % ports.length()));
        } catch (IOException refused) {
          // that receiver is down: the next one
        }
      }
      if (target == null) {
        closeQuietly(client);
        continue;
      }
      open.add(client);
      open.add(target);
      pipe(client, target);
      pipe(target, client);
    }
  }

  private void pipe(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buffer = new byte[8192];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException cut) {
        // one side went away: both close
      } finally {
        closeQuietly(from);
        closeQuietly(to);
        open.remove(from);
        open.remove(to);
      }
    }, "loopback-relay-pipe");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  /** Stops listening and cuts every relayed connection. */
  @Override
  public void close() throws IOException {
    down();
    listening.close();
  }
}

package dev.outboxreplay.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * A load balancer in front of receiver nodes, on loopback: each new connection goes to the next
 * node in turn, or to another one when that node refuses (it was killed). It never retries a
 * request: a connection cut mid-request is cut for the client, which is what a load balancer
 * may do and what the client must survive.
 */
final class SpreadingRelay implements AutoCloseable {
  private final ServerSocket listening;
  private final AtomicIntegerArray ports;
  private final AtomicInteger next = new AtomicInteger();

  SpreadingRelay(int... nodePorts) throws IOException {
    this.ports = new AtomicIntegerArray(nodePorts);
    this.listening = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "spreading-relay");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + listening.getLocalPort();
  }

  /** Node {@code index} now listens on {@code port} (it restarted). */
  void nodeMoved(int index, int port) {
    ports.set(index, port);
  }

  private void acceptLoop() {
    while (!listening.isClosed()) {
      Socket client;
      try {
        client = listening.accept();
      } catch (IOException closed) {
        return;
      }
      Socket node = null;
      int first = Math.floorMod(next.getAndIncrement(), ports.length());
      for (int i = 0; i < ports.length() && node == null; i++) {
        try {
          node = new Socket(InetAddress.getLoopbackAddress(),
              ports.get((first + i) % ports.length()));
        } catch (IOException refused) {
          // that node is down: the next one
        }
      }
      if (node == null) {
        closeQuietly(client);
        continue;
      }
      pipe(client, node);
      pipe(node, client);
    }
  }

  private static void pipe(Socket from, Socket to) {
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
      }
    }, "spreading-relay-pipe");
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

  @Override
  public void close() throws IOException {
    listening.close();
  }
}

package dev.outboxreplay.examples.notes;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The network between the app and its receiver, on loopback: relays TCP connections to {@code
 * target} while up; while down it accepts each connection and closes it at once, as a lost
 * network looks to a client, and cuts the connections it was relaying.
 */
final class LoopbackRelay implements AutoCloseable {
  private final ServerSocket listening;
  private final int target;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean up = true;

  LoopbackRelay(int target) throws IOException {
    this.target = target;
    this.listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "relay-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + listening.getLocalPort() + "/";
  }

  void up() {
    up = true;
  }

  /** The network is gone: open connections are cut, new ones closed at once. */
  void down() {
    up = false;
    for (Socket s : open) {
      closeQuietly(s);
    }
  }

  private void acceptLoop() {
    while (!listening.isClosed()) {
      try {
        Socket client = listening.accept();
        if (!up) {
          closeQuietly(client);
          continue;
        }
        Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
        open.add(client);
        open.add(server);
        pipe(client, server);
        pipe(server, client);
      } catch (IOException e) {
        // closed, or the receiver refused: the client sees its connection end
      }
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
      } catch (IOException e) {
        // cut: both ends close below
      } finally {
        closeQuietly(from);
        closeQuietly(to);
        open.remove(from);
        open.remove(to);
      }
    }, "relay-pipe");
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
    down();
    listening.close();
  }
}

package dev.outboxreplay.server.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.QuietException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiver's HTTP/1.1 server: Jetty on one address (loopback unless its owner chose
 * another), configured per instance (no JVM-wide properties).
 *
 * <p>A stalled client holds no thread: Jetty parses request heads without one, and the body is
 * read asynchronously; only a complete request reaches a worker. Limits: a request head must
 * arrive within the request-read timeout of the connection opening or of the previous answer,
 * and its body within the request-read timeout after the head, or the connection is closed; a
 * connection silent for the idle timeout is closed; at most {@code maxConnections} connections
 * are open (more wait in the accept queue);
 * {@code workers} threads run requests, with a queue of {@code maxConnections} (a request
 * beyond it is answered 503).
 */
public final class JettyFront implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JettyFront.class);

  /** Limits of one server. */
  public record Limits(int workers, int maxConnections, Duration idleTimeout,
      Duration requestReadTimeout, int maxBodyBytes, Duration stopGrace) {}

  private final Server server;
  private final ServerConnector connector;
  private final ThreadPoolExecutor workers;
  private final Limits limits;
  private final Function<Incoming, Answer> router;
  /** Per open connection: answers completed, or -1 while a request is being handled. */
  private final Map<Connection, Long> awaitingHead = new ConcurrentHashMap<>();

  /**
   * Binds {@code address}:{@code port} and starts serving.
   *
   * @throws IOException when the port cannot be bound
   */
  public JettyFront(InetAddress address, int port, Limits limits,
      Function<Incoming, Answer> router) throws IOException {
    this.limits = limits;
    this.router = router;
    this.workers = new ThreadPoolExecutor(limits.workers(), limits.workers(), 0,
        TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(limits.maxConnections()), r -> {
          Thread t = new Thread(r, "idempotent-server");
          t.setDaemon(true);
          return t;
        });
    QueuedThreadPool io = new QueuedThreadPool(8, 2);
    io.setName("idempotent-server-io");
    io.setDaemon(true);
    this.server = new Server(io);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendDateHeader(false);
    // daemon threads only: Jetty's default scheduler thread would keep the JVM alive
    this.connector = new ServerConnector(server, null,
        new ScheduledExecutorScheduler("idempotent-server-scheduler", true), null, 1, 1,
        new HttpConnectionFactory(http));
    connector.setHost(address.getHostAddress());
    connector.setPort(port);
    connector.setIdleTimeout(limits.idleTimeout().toMillis());
    connector.setAcceptQueueSize(128);
    server.addConnector(connector);
    server.addBean(new NetworkConnectionLimit(limits.maxConnections(), connector));
    connector.addBean(new Connection.Listener() {
      @Override
      public void onOpened(Connection connection) {
        awaitHead(connection, 0L);
      }

      @Override
      public void onClosed(Connection connection) {
        awaitingHead.remove(connection);
      }
    });
    server.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        receive(request, response, callback);
        return true;
      }
    });
    server.setStopTimeout(limits.stopGrace().toMillis());
    try {
      server.start();
    } catch (Exception e) {
      close();
      throw e instanceof IOException io2 ? io2
          : new IOException("cannot start the receiver on " + address.getHostAddress() + ":"
              + port, e);
    }
  }

  /** The bound port. */
  public int port() {
    return connector.getLocalPort();
  }

  /** The bound address, as a literal ({@code 127.0.0.1} unless the builder chose another). */
  public String host() {
    return connector.getHost();
  }

  /** Closes {@code connection} unless a request head arrives within the request-read timeout. */
  private void awaitHead(Connection connection, long answered) {
    awaitingHead.put(connection, answered);
    connector.getScheduler().schedule(() -> {
      if (awaitingHead.getOrDefault(connection, -1L) == answered) {
        connection.getEndPoint().close(); // no request head in time: a stalled client
      }
    }, limits.requestReadTimeout().toMillis(), TimeUnit.MILLISECONDS);
  }

  private void receive(Request request, Response response, Callback received) {
    Connection connection = request.getConnectionMetaData().getConnection();
    Long answered = awaitingHead.replace(connection, -1L);
    Callback callback = answered == null || answered < 0 ? received : new Callback() {
      // the next head's deadline is armed before Jetty may read the next request
      @Override
      public void succeeded() {
        rearm();
        received.succeeded();
      }

      @Override
      public void failed(Throwable failure) {
        rearm();
        received.failed(failure);
      }

      @Override
      public InvocationType getInvocationType() {
        return received.getInvocationType();
      }

      private void rearm() {
        if (awaitingHead.containsKey(connection)) {
          awaitHead(connection, answered + 1);
        }
      }
    };
    long declared = request.getLength();
    if (declared > limits.maxBodyBytes()) {
      dispatch(request, response, callback, null); // refused without reading it
      return;
    }
    BodyReader reader = new BodyReader(request, response, callback);
    Scheduler.Task deadline = connector.getScheduler().schedule(() -> {
      if (!reader.finished) {
        connection.getEndPoint().close(); // the pending read then fails the request
      }
    }, limits.requestReadTimeout().toMillis(), TimeUnit.MILLISECONDS);
    reader.deadline = deadline;
    reader.run();
  }

  /**
   * Reads a body without holding a thread while it waits: reads what has arrived, then asks
   * Jetty to call again when more does. Stops at the size limit without failing the request, so
   * it can still be answered 413.
   */
  private final class BodyReader implements Runnable {
    private final Request request;
    private final Response response;
    private final Callback callback;
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    volatile boolean finished;
    volatile Scheduler.Task deadline;

    BodyReader(Request request, Response response, Callback callback) {
      this.request = request;
      this.response = response;
      this.callback = callback;
    }

    @Override
    public void run() {
      while (true) {
        Content.Chunk chunk = request.read();
        if (chunk == null) {
          request.demand(this);
          return;
        }
        if (Content.Chunk.isFailure(chunk)) {
          finish();
          // the client went away, fell silent or was too slow: Jetty's debug log, not a warning
          callback.failed(new QuietException.Exception("request body not received",
              chunk.getFailure()));
          return;
        }
        ByteBuffer bytes = chunk.getByteBuffer();
        if (body.size() + bytes.remaining() > limits.maxBodyBytes()) {
          chunk.release();
          finish();
          dispatch(request, response, callback, null); // over the limit
          return;
        }
        byte[] copy = new byte[bytes.remaining()];
        bytes.get(copy);
        body.write(copy, 0, copy.length);
        boolean last = chunk.isLast();
        chunk.release();
        if (last) {
          finish();
          dispatch(request, response, callback, body.toByteArray());
          return;
        }
      }
    }

    private void finish() {
      finished = true;
      Scheduler.Task task = deadline;
      if (task != null) {
        task.cancel();
      }
    }
  }

  private void dispatch(Request request, Response response, Callback callback, byte[] body) {
    Incoming incoming = new Incoming(request.getMethod(), request.getHttpURI().getPath(),
        name -> request.getHeaders().get(name), body);
    try {
      workers.execute(() -> {
        Answer answer;
        try {
          answer = router.apply(incoming);
        } catch (RuntimeException | Error e) {
          LOG.error("request failed: {}", IdempotencyProtocol.withoutMessage(e));
          answer = Answer.problem(500, "Internal Server Error", "the request failed");
        }
        if (answer.dropConnection()) {
          request.getConnectionMetaData().getConnection().getEndPoint().close();
          callback.failed(new QuietException.Exception("answer dropped by the fault plan"));
        } else {
          write(response, callback, answer);
        }
      });
    } catch (RejectedExecutionException e) {
      write(response, callback, Answer.problem(503, "about:blank", "Service Unavailable",
          "the receiver is busy or stopping; retry later", Map.of("Retry-After", "1")));
    }
  }

  private static void write(Response response, Callback callback, Answer answer) {
    response.setStatus(answer.status());
    if (answer.contentType() != null) {
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
    }
    answer.headers().forEach((name, value) -> response.getHeaders().put(
        new HttpField(name, value)));
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, answer.body().length);
    response.write(true, ByteBuffer.wrap(answer.body()), callback);
  }

  /**
   * Closes connections that wait for a request (clients' idle keep-alive connections), stops
   * accepting, gives requests in flight up to the stop grace, then lets the workers finish what
   * they run (never interrupting a thread that may be writing the database), up to 5 s.
   */
  @Override
  public void close() {
    // Jetty's graceful stop waits out its whole grace for a keep-alive connection the client has
    // not closed (it only shuts its output), as if a request were in flight
    for (EndPoint endPoint : connector.getConnectedEndPoints()) {
      if (awaitingHead.getOrDefault(endPoint.getConnection(), 0L) >= 0) {
        endPoint.close(); // waiting for a request head; -1 is a request being handled
      }
    }
    try {
      server.stop();
    } catch (java.util.concurrent.TimeoutException e) {
      // requests still in flight at the end of the grace; Jetty closed their connections
      LOG.debug("connections still open at the end of the stop grace were closed");
    } catch (Exception e) {
      LOG.warn("stopping the HTTP server failed: {}", e.toString());
    }
    workers.shutdown();
    try {
      if (!workers.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("request workers still running 5 s after close; left to finish on their own");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

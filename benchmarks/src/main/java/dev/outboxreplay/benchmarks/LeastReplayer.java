package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Reason;
import dev.outboxreplay.Status;
import dev.outboxreplay.benchmarks.FloorProbe.Row;
import dev.outboxreplay.jdbc.Dialect;
import dev.outboxreplay.jdbc.JdbcDatabase;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The least a replayer on the outbox table does around each request, end to end over HTTP: the
 * bound the replay benchmark measures the replayer against, in the same run, as the floor probe
 * is without HTTP.
 *
 * <p>One pass thread does every write, as the library's does; {@code concurrency} sender threads
 * each send one request at a time through the same OkHttp client. Each commit records the answers
 * that came back since the last one (acked, with the response body, audited) and claims (fencing
 * token, lease, audited) and marks sending (audited) as many rows as senders are free; only once
 * that commit returns do those rows' requests leave, so every request's state is durable before
 * it is sent and its answer after it returns. The pass waits for at least one answer before the
 * next commit, as the library's records answers as soon as a sender is idle.
 *
 * <p>It does less than any replayer that keeps the library's promises: the rows to send are a list
 * read once in accept order (no due-row query, no order between the rows of an entity, no lease
 * recovery), the requests are built before the clock starts (as the raw loop's), no row is read
 * back, and nothing is reported to listeners. So what it reaches bounds what such a replayer can
 * reach on the same machine, engine and receiver.
 */
final class LeastReplayer {
  /** The thread that does every write, as the replayer's {@code outbox-replayer}. */
  static final String PASS_THREAD = "least-replayer";
  /** The sender threads. */
  static final String SENDER_THREADS = "least-sender";
  private final JdbcDatabase db;
  private final OkHttpClient client;
  private final int concurrency;

  LeastReplayer(JdbcDatabase db, OkHttpClient client, int concurrency) {
    this.db = db;
    this.client = client;
    this.concurrency = concurrency;
  }

  /** An answer from a sender: the row's index and the response body, or what failed. */
  private record Answer(int index, byte[] body, Exception failure) {}

  /** The outbox rows in accept order, to pair with the requests built for them. */
  List<Row> rows() throws SQLException {
    try (Connection c = db.dataSource().getConnection()) {
      return FloorProbe.rows(c, db.dialect());
    }
  }

  /**
   * Sends {@code requests.get(n)} for {@code rows.get(n)}, every one, and records each answer,
   * from a pass thread of its own ({@link #PASS_THREAD}). When it returns, every row is acked:
   * each answer's update must change its row from sending to acked, or the replay fails.
   *
   * @return where the pass thread and the senders spent their time, per command
   * @throws IOException when a request failed or was not answered 201
   */
  String replay(List<Row> rows, List<Request> requests) throws Exception {
    ExecutorService passThread = Executors.newSingleThreadExecutor(
        r -> new Thread(r, PASS_THREAD));
    try {
      return passThread.submit(() -> pass(rows, requests)).get();
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    } finally {
      passThread.shutdown();
    }
  }

  private String pass(List<Row> rows, List<Request> requests) throws Exception {
    ThreadGroupTimes passStart = ThreadGroupTimes.of(PASS_THREAD);
    ThreadGroupTimes sendersStart = ThreadGroupTimes.of(SENDER_THREADS);
    Dialect dialect = db.dialect();
    LinkedBlockingQueue<Answer> answers = new LinkedBlockingQueue<>();
    ExecutorService senders = Executors.newFixedThreadPool(concurrency,
        r -> new Thread(r, SENDER_THREADS));
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      int next = 0;
      int inFlight = 0;
      List<Answer> done = new ArrayList<>(concurrency);
      while (next < rows.size() || inFlight > 0) {
        done.clear();
        if (inFlight > 0) {
          done.add(answers.take());
          answers.drainTo(done);
        }
        int from = next;
        int to = Math.min(rows.size(), next + concurrency - inFlight + done.size());
        write(c, dialect, rows, done, from, to);
        inFlight += (to - from) - done.size();
        next = to;
        for (int n = from; n < to; n++) {
          Request request = requests.get(n);
          int index = n;
          senders.execute(() -> answers.add(send(index, request)));
        }
      }
      // read while the senders still run: a thread that ended takes its times along
      return ThreadGroupTimes.of(PASS_THREAD).perCommandSince(passStart, rows.size()) + "; "
          + ThreadGroupTimes.of(SENDER_THREADS).perCommandSince(sendersStart, rows.size());
    } finally {
      senders.shutdownNow();
    }
  }

  private Answer send(int index, Request request) {
    try (Response response = client.newCall(request).execute()) {
      byte[] body = response.body().bytes();
      if (response.code() != 201) {
        return new Answer(index, null, new IOException("unexpected " + response.code()));
      }
      return new Answer(index, body, null);
    } catch (IOException | RuntimeException e) {
      return new Answer(index, null, e);
    }
  }

  /** One commit: the answers in {@code done}, then rows {@code from} to {@code to} sending. */
  private static void write(Connection c, Dialect dialect, List<Row> rows, List<Answer> done,
      int from, int to) throws Exception {
    long now = System.currentTimeMillis();
    try (PreparedStatement answer = c.prepareStatement(FloorProbe.ANSWER);
        PreparedStatement claim = c.prepareStatement(FloorProbe.claim(dialect));
        PreparedStatement mark = c.prepareStatement(FloorProbe.MARK);
        PreparedStatement audit = c.prepareStatement(FloorProbe.AUDIT)) {
      for (Answer a : done) {
        if (a.failure() != null) {
          throw a.failure();
        }
        Row r = rows.get(a.index());
        answer.setBytes(1, a.body());
        answer.setLong(2, now);
        dialect.setId(answer, 3, r.id());
        FloorProbe.updateOne(answer, r);
        FloorProbe.audit(audit, dialect, r, Status.SENDING, Status.ACKED, Reason.ACKED, now);
      }
      for (int n = from; n < to; n++) {
        Row r = rows.get(n);
        dialect.advanceFencingToken(c);
        claim.setLong(1, now + 30_000);
        claim.setLong(2, now);
        dialect.setId(claim, 3, r.id());
        FloorProbe.updateOne(claim, r);
        FloorProbe.audit(audit, dialect, r, Status.QUEUED, Status.CLAIMED, Reason.CLAIMED, now);
        mark.setLong(1, now + 30_000);
        mark.setLong(2, now);
        dialect.setId(mark, 3, r.id());
        mark.setString(4, Status.CLAIMED.wireName());
        FloorProbe.updateOne(mark, r);
        FloorProbe.audit(audit, dialect, r, Status.CLAIMED, Status.SENDING, Reason.SENDING, now);
      }
    }
    c.commit();
  }
}

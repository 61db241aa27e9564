package dev.outboxreplay.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.CommandId;
import dev.outboxreplay.Inbox;
import dev.outboxreplay.InboxMessage;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.ReceiveResult;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2InboxStore;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.http.HttpConnectivityMonitor;
import dev.outboxreplay.http.OkHttpTransport;
import dev.outboxreplay.micrometer.OutboxMetrics;
import dev.outboxreplay.server.HandlerResponse;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.ServerRequest;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.SqliteOutboxStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import okhttp3.HttpUrl;

/**
 * The guide's (docs/guide.md) Java blocks, each between a {@code // GUIDE:begin} and a {@code // GUIDE:end}
 * line. {@code GuideExamplesTest} checks that the guide shows exactly these lines, in this
 * order, and runs every one of them against real parts: an H2 file, the reference server on
 * loopback, a Micrometer registry. Code outside the markers is what the guide names as "your
 * own code" ({@link #markSynced}, {@link #applyNote}, the ratchet stand-in).
 */
final class GuideExamples {
  private GuideExamples() {}

  static OutboxRecord quickStart(Path file) throws SQLException {
    // GUIDE:begin
    // file: where the database lives, e.g. DataFolder.forApplication("Notes").resolve("outbox")
    OutboxRecord queued;
    try (H2Database db = H2Database.open(file)) {                  // WRITE_DELAY=0, pooled
      Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS note (id VARCHAR PRIMARY KEY, body VARCHAR, "
            + "synced BOOLEAN DEFAULT FALSE)");                    // the app's own table
      }
      queued = db.inTransaction(tx -> {                            // the app's own transaction
        try (PreparedStatement ps = tx.prepareStatement(
            "MERGE INTO note (id, body) KEY (id) VALUES (?, ?)")) {
          ps.setString(1, "note-1");
          ps.setString(2, "buy milk");
          ps.executeUpdate();
        }
        return outbox.accept(tx,                                   // joins that transaction
            OutboxCommand.of("note.put", "note-1", Map.of("id", "note-1", "body", "buy milk")));
      });                                     // committed: both durable, or neither; checked
    }
    // GUIDE:end
    return queued;
  }

  static OutboxRecord sqliteStart(Path file) {
    // GUIDE:begin
    // file: for example Path.of("data/app"), which names data/app.sqlite
    OutboxRecord queued;
    try (SqliteDatabase db = SqliteDatabase.open(file)) {          // WAL, synchronous=NORMAL
      Outbox<Connection> outbox = Outbox.builder(SqliteOutboxStore.create(db)).build();
      queued = db.inTransaction(tx -> {                            // BEGIN IMMEDIATE ... COMMIT
        try (Statement s = tx.createStatement()) {
          s.execute("CREATE TABLE IF NOT EXISTS note (id TEXT PRIMARY KEY, body TEXT)");
        }
        try (PreparedStatement ps = tx.prepareStatement("INSERT INTO note (id, body) "
            + "VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body")) {
          ps.setString(1, "note-1");
          ps.setString(2, "buy milk");
          ps.executeUpdate();
        }
        return outbox.accept(tx,
            OutboxCommand.of("note.put", "note-1", Map.of("id", "note-1", "body", "buy milk")));
      });
    }
    // GUIDE:end
    return queued;
  }

  static Optional<OutboxRecord> replay(H2OutboxStore store, HttpUrl baseUrl,
      SessionRuntime appSession, CommandId commandId) throws InterruptedException {
    // GUIDE:begin
    // store: the H2OutboxStore; baseUrl: the receiver's okhttp3.HttpUrl; appSession: your
    // SessionRuntime (SessionRuntime.ANONYMOUS without login); commandId: queued.commandId()
    Optional<OutboxRecord> outcome;
    OkHttpTransport transport = OkHttpTransport.builder(baseUrl)   // e.g. https://api.example.com/v1
        .build();                                                  // never resends on its own
    try (Replayer<Connection> replayer = Replayer.builder(store, transport)
        .session(appSession)                           // tenant, version, revoked, credentials
        .responseApplier((tx, command, response) -> markSynced(tx, command))  // same tx as ack
        .connectivityMonitor(new HttpConnectivityMonitor(baseUrl, Duration.ofSeconds(1),
            Duration.ofMinutes(1)))
        .build()) {
      replayer.start();              // recovery, then a pass; timer for due retries
      // Outbox.builder(store).onAccepted(replayer::onAccepted) wakes it after each
      // self-committed accept; after an accept inside your own transaction, call it once you
      // committed:
      replayer.onAccepted();
      outcome = replayer.awaitTerminal(commandId, Duration.ofSeconds(30)); // acked/conflict/...
      replayer.awaitDrained(Duration.ofMinutes(2));                  // true once nothing is open
      // from your own network callback, if you have one:
      //   replayer.onNetworkAvailable();  replayer.onNetworkLost();  (hold replay until up)
    }
    // GUIDE:end
    return outcome;
  }

  /** Your own code: records in the same transaction as the ack that the note reached the server. */
  static void markSynced(Connection tx, OutboxRecord command) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement("UPDATE note SET synced = TRUE WHERE id = ?")) {
      ps.setString(1, command.entityKey());
      ps.executeUpdate();
    }
  }

  static ReceiveResult inbox(H2Database cryptoDb, byte[] ciphertext, Map<String, byte[]> history) {
    // GUIDE:begin
    // cryptoDb: the H2Database that holds your ratchet; history: your own Map<String, byte[]>
    Inbox<Connection> inbox = Inbox.builder(H2InboxStore.create(cryptoDb),
        (Connection tx, InboxMessage m) -> Ratchet.decrypt(tx, m.scope(), m.bytes()), // same tx
        (scope, id, plaintext) -> history.put(scope + "/" + id, plaintext))         // idempotent
        .build();                                                  // replays pending projections
    ReceiveResult r = inbox.receive("alice@laptop", "msg-17", ciphertext);  // CONSUMED, ...
    // GUIDE:end
    return r;
  }

  /** Stands in for the application's irreversible step, here a reversible XOR with one key. */
  static final class Ratchet {
    private Ratchet() {}

    static byte[] decrypt(Connection tx, String scope, byte[] ciphertext) {
      byte[] plain = ciphertext.clone();
      for (int i = 0; i < plain.length; i++) {
        plain[i] ^= 0x5a;
      }
      return plain;
    }
  }

  /** A running reference server and the database it keeps its records in. */
  record RunningServer(IdempotentServer server, H2Database serverDb) implements AutoCloseable {
    @Override
    public void close() {
      server.close();
      serverDb.close();
    }
  }

  static RunningServer server(Path dataFile) throws Exception {
    // GUIDE:begin
    // dataFile: the server's own database, for example Path.of("server-data/app")
    H2Database serverDb = H2Database.open(dataFile);
    IdempotentServer server = IdempotentServer.builder()
        .database(serverDb)
        .handler("note.put", (Connection tx, ServerRequest request) -> {   // same tx as record
          applyNote(tx, request.body());
          return HandlerResponse.json(201, "{\"applied\":true}");
        })
        .start();                                 // 127.0.0.1, free port: server.baseUrl()
    // when done: server.close(), then serverDb.close()
    // GUIDE:end
    return new RunningServer(server, serverDb);
  }

  /** Your own code: the receiver's business effect, in the idempotency record's transaction. */
  static void applyNote(Connection tx, byte[] body) throws SQLException {
    try (Statement s = tx.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS applied_note (body VARCHAR)");
    }
    try (PreparedStatement ps = tx.prepareStatement("INSERT INTO applied_note VALUES (?)")) {
      ps.setString(1, new String(body, StandardCharsets.UTF_8));
      ps.executeUpdate();
    }
  }

  static OutboxMetrics metrics(H2OutboxStore store, OkHttpTransport transport,
      MeterRegistry meterRegistry) {
    // GUIDE:begin
    // store, transport: as above; meterRegistry: your Micrometer MeterRegistry
    OutboxMetrics metrics = OutboxMetrics.of(store);          // outbox-micrometer
    metrics.bindTo(meterRegistry);                             // gauges: outbox.commands{status}
    try (Replayer<Connection> replayer = Replayer.builder(store, transport)
        .listener(metrics).build()) {                          // counters and timers from replay
      replayer.runPass();
    }
    // GUIDE:end
    return metrics;
  }

  static OutboxRecord ownDataSource(Path file) throws SQLException {
    // GUIDE:begin
    // file: the database your application's pool opens, for example Path.of("data/app")
    OutboxRecord accepted;
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl("jdbc:h2:file:" + file + ";WRITE_DELAY=0");   // durable on return: required
    config.setUsername("sa");
    config.setPassword("");
    try (HikariDataSource appPool = new HikariDataSource(config);
        H2Database db = H2Database.builder().dataSource(appPool)
            .withoutCrashRepairs(true)                 // required: see below what it gives up
            .build()) {
      Outbox<Connection> outbox = Outbox.builder(H2OutboxStore.create(db)).build();
      accepted = db.inTransaction(tx ->                // a transaction on appPool, then checked
          outbox.accept(tx, OutboxCommand.of("note.put", "note-2", Map.of("id", "note-2"))));
    }
    // GUIDE:end
    return accepted;
  }
}

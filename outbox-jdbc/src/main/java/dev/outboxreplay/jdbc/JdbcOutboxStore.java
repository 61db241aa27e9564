package dev.outboxreplay.jdbc;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.FencedOffException;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.OutboxException;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.OutboxStore;
import dev.outboxreplay.Outcome;
import dev.outboxreplay.PreparedCommand;
import dev.outboxreplay.StateMachine;
import dev.outboxreplay.Status;
import dev.outboxreplay.jdbc.internal.GroupCommitter;
import dev.outboxreplay.jdbc.internal.Rollback;
import dev.outboxreplay.jdbc.internal.LayoutReader;
import dev.outboxreplay.jdbc.internal.OutboxAuditSql;
import dev.outboxreplay.jdbc.internal.LeaseRecovery;
import dev.outboxreplay.jdbc.internal.OutboxCounts;
import dev.outboxreplay.jdbc.internal.OutboxInserter;
import dev.outboxreplay.jdbc.internal.OutboxRetention;
import dev.outboxreplay.jdbc.internal.OutboxRows;
import dev.outboxreplay.jdbc.internal.OutboxTables;
import dev.outboxreplay.jdbc.internal.SchemaMigrator;
import dev.outboxreplay.jdbc.internal.OutboxSql;
import dev.outboxreplay.internal.Arguments;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.time.Clock;

/**
 * The outbox store on one open file ({@link JdbcDatabase}) of any engine with a {@link Dialect}.
 * Accepts from concurrent threads share commits
 * ({@linkplain GroupCommitter group commit}); claims take rows with compare-and-set updates on
 * (id, status, fencing token), so replayers in several threads or processes never hold the same
 * row at once. Table layout: {@code docs/table-layout.md}.
 *
 * <p>Thread-safe. Closing the store does not close the database it was created on.
 */
public class JdbcOutboxStore implements OutboxStore<Connection> {
  private final JdbcDatabase database;
  private final OutboxInserter inserter;
  private final GroupCommitter<List<PreparedCommand>, List<OutboxRecord>> committer;
  private final OutboxSql sql;
  private final OutboxAuditSql audit;
  private final LeaseRecovery leases;
  private final OutboxRetention retention;
  /** Commands per read of {@link #export}. */
  private static final int EXPORT_PAGE = 500;

  /**
   * A store on {@code database}, whose outbox tables must be this release's: engine modules call
   * it from their {@code create}. Registers its close with the database.
   */
  protected JdbcOutboxStore(JdbcDatabase database) {
    this.database = Objects.requireNonNull(database, "database == null");
    Dialect dialect = database.dialect();
    OutboxRows rows = new OutboxRows(database.file(), dialect);
    this.inserter = new OutboxInserter(rows, dialect);
    this.committer = new GroupCommitter<>(database, inserter);
    this.audit = new OutboxAuditSql(dialect);
    this.sql = new OutboxSql(rows, dialect, audit);
    this.leases = new LeaseRecovery(rows, sql, dialect);
    this.retention = new OutboxRetention(dialect);
    database.beforeClose(this::close);
  }

  /**
   * Creates the outbox tables in {@code database} if needed, upgrading older layouts.
   *
   * @throws OutboxStorageException when the file's outbox schema is newer than this release
   */
  public static JdbcOutboxStore create(JdbcDatabase database) {
    return create(database, JdbcOutboxStore::new);
  }

  /**
   * Creates or upgrades the outbox tables, then makes the store with {@code store}: for engine
   * modules whose store type names the engine.
   */
  protected static <S extends JdbcOutboxStore> S create(JdbcDatabase database,
      Function<JdbcDatabase, S> store) {
    Objects.requireNonNull(database, "database == null");
    SchemaMigrator.migrate(database, OutboxTables.COMPONENT,
        database.dialect().outboxMigrations(), Clock.systemUTC());
    return store.apply(database);
  }

  /** The outbox layout version this release writes and reads on {@code database}'s engine. */
  private static int latest(JdbcDatabase database) {
    List<Migration> steps = database.dialect().outboxMigrations();
    return steps.get(steps.size() - 1).version();
  }

  /**
   * Opens the outbox that {@code database} already holds, and never adds one to a file that has
   * none (such as another application's file). On a writable database an older outbox layout is
   * upgraded, and an {@linkplain Layout#UNFINISHED unfinished} file is finished; on a
   * {@linkplain JdbcDatabase#readOnly() read-only} one nothing is written, so the layout must be
   * this release's.
   *
   * @throws OutboxStorageException (not retryable) naming the file when it holds no outbox, or
   *     one this release cannot use as it is
   */
  public static JdbcOutboxStore openExisting(JdbcDatabase database) {
    return openExisting(database, JdbcOutboxStore::new);
  }

  /** {@link #openExisting(JdbcDatabase)}, making the store with {@code store}. */
  protected static <S extends JdbcOutboxStore> S openExisting(JdbcDatabase database,
      Function<JdbcDatabase, S> store) {
    Objects.requireNonNull(database, "database == null");
    Layout layout = layout(database);
    int installed = SchemaMigrator.installedVersion(database, OutboxTables.COMPONENT);
    int latest = latest(database);
    if (layout == Layout.NO_OUTBOX) {
      throw new OutboxStorageException("cannot open outbox database " + database.file()
          + ": it holds no outbox (no outbox tables); nothing was added to it");
    }
    if (!database.readOnly()) {
      return create(database, store);
    }
    if (layout == Layout.UNFINISHED) {
      throw new OutboxStorageException("cannot read outbox database " + database.file()
          + " read-only: its outbox was never finished (layout version " + installed + " of "
          + latest + ": the process creating it was stopped) and it holds no command; the next "
          + "open for writing finishes it");
    }
    if (installed != latest) {
      throw new OutboxStorageException("cannot read outbox database " + database.file()
          + " read-only: its outbox layout is version " + installed + ", this release reads "
          + "version " + latest + (installed < latest ? " (open it once for writing, for "
          + "example with outbox replay, to upgrade it)" : " (upgrade the library)"));
    }
    return store.apply(database);
  }

  /** What a file holds, as far as the outbox is concerned; see {@link #layout}. */
  public enum Layout {
    /** The outbox of this release, or an older one that a writable open upgrades. */
    OUTBOX,
    /**
     * A file whose creation never finished: a process was stopped while it created the outbox
     * tables (no table at all, or only the library's own, or a layout older than this release's
     * with no command in it). It holds nothing to lose: read-only, it reads as an empty outbox;
     * the next writable open finishes it.
     */
    UNFINISHED,
    /** Tables of something else and no outbox: another application's file. */
    NO_OUTBOX,
    /** An outbox written by a newer release. */
    NEWER
  }

  /** What {@code database} holds. Reads only. */
  public static Layout layout(JdbcDatabase database) {
    int installed = SchemaMigrator.installedVersion(database, OutboxTables.COMPONENT);
    int latest = latest(database);
    if (installed > latest) {
      return Layout.NEWER;
    }
    try (Connection c = database.dataSource().getConnection()) {
      LayoutReader file = LayoutReader.read(c, database);
      if (installed == 0) {
        return file.onlyTheLibrarysTables() && file.commandRows(installed) == 0
            ? Layout.UNFINISHED : Layout.NO_OUTBOX;
      }
      if (installed == latest) {
        return Layout.OUTBOX;
      }
      return file.commandRows(installed) == 0 ? Layout.UNFINISHED : Layout.OUTBOX;
    } catch (SQLException e) {
      throw database.onStatement("reading the outbox layout", e);
    }
  }

  /** The database this store writes to. */
  public JdbcDatabase database() {
    return database;
  }

  @Override
  public List<OutboxRecord> insert(List<PreparedCommand> batch) {
    List<PreparedCommand> commands = List.copyOf(batch);
    try {
      // safe to run again: a command whose earlier try did commit resolves to its stored row
      return database.retry(() -> committer.submit(commands));
    } catch (SQLException e) {
      throw database.onStatement("accept", e);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Commit {@code transaction} with {@link JdbcDatabase#inTransaction} (or call {@link
   * JdbcDatabase#afterCommit} after committing it yourself): it syncs in power-loss mode and
   * throws when the commit's outcome is unknown (the process serving a shared H2 file closed the
   * session during it).
   */
  @Override
  public List<OutboxRecord> insert(Connection transaction, List<PreparedCommand> batch) {
    List<PreparedCommand> commands = List.copyOf(batch);
    return inCallerTransaction("accept", transaction, c -> inserter.insert(c, commands));
  }

  @Override
  public List<OutboxRecord> claim(String owner, Duration lease, int limit, Instant now) {
    checkClaim(owner, lease, limit);
    return inTransaction("claim", c -> {
      database.dialect().beginWrite(c);
      List<OutboxRecord> claimed = sql.claim(c, owner, now.plus(lease), limit, now);
      c.commit();
      database.afterCommit(c);
      return claimed;
    });
  }

  @Override
  public List<OutboxRecord> claim(Connection transaction, String owner, Duration lease,
      int limit, Instant now) {
    checkClaim(owner, lease, limit);
    return inCallerTransaction("claim", transaction,
        c -> sql.claim(c, owner, now.plus(lease), limit, now));
  }

  @Override
  public Optional<OutboxRecord> claimNextOfEntity(Connection transaction, String owner,
      Duration lease, OutboxRecord sending, long sessionVersion, Instant now) {
    checkClaim(owner, lease, 1);
    Objects.requireNonNull(sending, "sending == null");
    return inCallerTransaction("claim next of entity", transaction,
        c -> sql.claimNextOfEntity(c, owner, now.plus(lease), sending, sessionVersion, now));
  }

  private static void checkClaim(String owner, Duration lease, int limit) {
    Objects.requireNonNull(owner, "owner == null");
    if (owner.isBlank() || owner.length() > 200) {
      throw new IllegalArgumentException("owner must be 1-200 characters: '" + owner + "'");
    }
    Arguments.positive("lease", lease);
    Arguments.atLeastOne("limit", limit);
  }

  @Override
  public OutboxRecord markSending(CommandId id, long fencingToken, Instant leaseExpiresAt,
      Instant now) {
    return autoCommitted("mark sending",
        c -> sql.markSending(c, id, fencingToken, leaseExpiresAt, now));
  }

  @Override
  public List<OutboxRecord> markSending(Connection transaction, List<OutboxRecord> claimed,
      Instant leaseExpiresAt, Instant now) {
    return inCallerTransaction("mark sending", transaction,
        c -> sql.markSendingIfHeld(c, claimed, leaseExpiresAt, now));
  }

  @Override
  public OutboxRecord complete(CommandId id, long fencingToken, Status expected, Outcome outcome,
      Instant now) {
    StateMachine.requireAllowed(expected, outcome.status());
    return autoCommitted("complete",
        c -> sql.complete(c, id, fencingToken, expected, outcome, now));
  }

  @Override
  public OutboxRecord complete(Connection transaction, CommandId id, long fencingToken,
      Status expected, Outcome outcome, Instant now) {
    StateMachine.requireAllowed(expected, outcome.status());
    return inCallerTransaction("complete", transaction,
        c -> sql.complete(c, id, fencingToken, expected, outcome, now));
  }

  @Override
  public OutboxRecord complete(Connection transaction, OutboxRecord held, Status expected,
      Outcome outcome, Instant now) {
    StateMachine.requireAllowed(expected, outcome.status());
    return inCallerTransaction("complete", transaction,
        c -> sql.complete(c, held, expected, outcome, now));
  }

  @Override
  public OutboxRecord release(CommandId id, long fencingToken, Instant nextAttemptAt,
      Instant now) {
    return autoCommitted("release", c -> sql.release(c, id, fencingToken, nextAttemptAt, now));
  }

  @Override
  public List<RecoveredLease> recoverExpiredLeases(Instant now) {
    return autoCommitted("recover expired leases", c -> {
      sql.repairEntityHeads(c);
      return leases.recover(c, now);
    });
  }

  @Override
  public Optional<OutboxRecord> firstAckedAfter(CommandId id) {
    return read("first acked after", c -> {
      OutboxRecord current = sql.find(c, id)
          .orElseThrow(() -> new NoSuchElementException("no outbox command " + id));
      return sql.firstAckedAfter(c, current);
    });
  }

  @Override
  public OutboxRecord requeue(CommandId id, Instant now) {
    return autoCommitted("requeue", c -> {
      OutboxRecord current = sql.find(c, id)
          .orElseThrow(() -> new NoSuchElementException("no outbox command " + id));
      if (!StateMachine.isOperatorAction(current.status(), Status.QUEUED)) {
        throw new IllegalStateException("command " + id + " is " + current.status().wireName()
            + "; only conflict or rejected commands can be requeued");
      }
      if (!current.payload().retained()) {
        throw new IllegalStateException("command " + id + " is a tombstone: the history "
            + "retention dropped its payload, so it cannot be sent again; accept it anew");
      }
      return sql.requeue(c, current, now).orElseThrow(() -> new FencedOffException(
          id, current.status(), current.fencingToken(), null, 0));
    });
  }

  @Override
  public <R> R inTransaction(TransactionWork<Connection, R> work) {
    return inTransaction("transaction", c -> {
      database.dialect().beginWrite(c);
      R result;
      try {
        result = work.run(c);
      } catch (SQLException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new OutboxException("transaction work failed: " + e, e);
      }
      c.commit();
      database.afterCommit(c);
      return result;
    });
  }

  @Override
  public Optional<Instant> nextDueAt() {
    return read("next due time", sql::nextDueAt);
  }

  @Override
  public List<AuditEntry> auditTrail(CommandId id) {
    return read("audit trail", c -> audit.trail(c, id));
  }

  @Override
  public int pruneAudit(Instant before) {
    return autoCommitted("prune audit", c -> audit.prune(c, before));
  }

  @Override
  public int tombstoneEnded(Instant endedBefore, Instant now) {
    return inBatches("tombstone ended commands", c -> retention.tombstone(c,
        retention.endedNotTombstoned(c, endedBefore), now));
  }

  @Override
  public int deleteTombstones(Instant endedBefore) {
    int deleted = inBatches("delete tombstones", c -> retention.delete(c,
        retention.tombstonesEnded(c, endedBefore)));
    if (deleted > 0) {
      database.reclaimSpace();
    }
    return deleted;
  }

  /**
   * Runs {@code batch} in its own committed transaction until it changes fewer than a full batch
   * of rows, so an accept waits at most one batch. @return rows changed in all
   */
  private int inBatches(String action, Work<Integer> batch) {
    int total = 0;
    int changed;
    do {
      changed = autoCommitted(action, batch);
      total += changed;
    } while (changed == OutboxRetention.BATCH);
    return total;
  }

  @Override
  public Optional<OutboxRecord> find(CommandId id) {
    return read("find", c -> sql.find(c, id));
  }

  @Override
  public Optional<OutboxRecord> findByKey(IdempotencyKey key) {
    return read("find by key", c -> sql.findByKey(c, key));
  }

  @Override
  public List<OutboxRecord> list(Status status, int limit) {
    Objects.requireNonNull(status, "status == null");
    return read("list", c -> sql.list(c, status, limit));
  }

  @Override
  public Map<Status, Long> countByStatus() {
    return read("count by status", OutboxCounts::byStatus); // every status, zero included
  }

  /**
   * Rows in {@code status} per the code of their last error (a {@link dev.outboxreplay.Reason}
   * wire name such as {@code poison_max_attempts}, or the receiver's code such as
   * {@code http_400}); rows without one are not counted. For operators and {@code outbox status}.
   */
  public Map<String, Long> countByErrorCode(Status status) {
    Objects.requireNonNull(status, "status == null");
    return read("count by error code", c -> OutboxCounts.byErrorCode(c, status));
  }

  /** One command with its audit trail, as {@link #export} hands it out. */
  public record Exported(OutboxRecord command, List<AuditEntry> audit) {}

  /**
   * Hands every command, with its audit trail, to {@code sink} in accept order, all as of one
   * moment: one snapshot of the file, so a replay running meanwhile changes nothing of what is
   * handed out and no command comes twice. Holds one page of commands in memory at a time. For
   * operators ({@code outbox export}); {@code sink} runs inside the read, so keep it quick.
   */
  public void export(Consumer<Exported> sink) {
    Objects.requireNonNull(sink, "sink == null");
    // not run again through a handover: the sink may already have what a first try handed out
    inTransaction("export", c -> {
      database.dialect().readOneSnapshot(c);
      long after = Long.MIN_VALUE;
      List<OutboxRecord> page;
      do {
        page = sql.page(c, after, EXPORT_PAGE);
        for (OutboxRecord r : page) {
          sink.accept(new Exported(r, audit.trail(c, r.commandId())));
        }
        after = page.isEmpty() ? after : page.get(page.size() - 1).acceptSequence();
      } while (page.size() == EXPORT_PAGE);
      return null;
    });
  }

  /** When the oldest command that is not yet acked, conflict or rejected was accepted. */
  @Override
  public Optional<Instant> oldestOpenAcceptedAt() {
    return read("oldest open command", c -> OutboxCounts.oldestOpenAcceptedAt(c, database.dialect()));
  }

  /**
   * Returns the store's one pooled connection (used to write accepts) to the pool. Does not close
   * the {@link JdbcDatabase}; the store can still be used and reopens it on the next accept.
   */
  @Override
  public void close() {
    committer.close();
  }

  /**
   * Runs {@code work} on the caller's open transaction, which it neither commits nor closes.
   *
   * @throws IllegalArgumentException when {@code transaction} is in auto-commit mode
   */
  private <R> R inCallerTransaction(String action, Connection transaction, Work<R> work) {
    try {
      if (transaction.getAutoCommit()) {
        throw new IllegalArgumentException("the caller's connection is in auto-commit mode; "
            + "call setAutoCommit(false) so the outbox write joins your transaction");
      }
      return work.run(transaction);
    } catch (SQLException e) {
      throw database.onStatement(action + " in caller transaction", e);
    }
  }

  @FunctionalInterface
  private interface Work<R> {
    R run(Connection c) throws SQLException;
  }

  private <R> R autoCommitted(String action, Work<R> work) {
    return inTransaction(action, c -> {
      database.dialect().beginWrite(c);
      R result = work.run(c);
      c.commit();
      database.afterCommit(c);
      return result;
    });
  }

  /**
   * Runs a read in its own transaction, again through a handover: a read is safe to run again.
   * Seen in the field: a {@code replay --until-drained} whose wait for the drain read the counts
   * just as the process serving the file closed ended with "Connection is broken".
   */
  private <R> R read(String action, Work<R> work) {
    try {
      return database.retry(() -> readOnce(work));
    } catch (SQLException e) {
      throw database.onStatement(action, e);
    }
  }

  private <R> R readOnce(Work<R> work) throws SQLException {
    try (Connection c = database.dataSource().getConnection()) {
      c.setAutoCommit(false);
      try {
        R result = work.run(c);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        Rollback.after(e, c, null);
        throw e;
      }
    }
  }

  private <R> R inTransaction(String action, Work<R> work) {
    try (Connection c = database.dataSource().getConnection()) {
      c.setAutoCommit(false);
      try {
        return work.run(c);
      } catch (SQLException | RuntimeException e) {
        Rollback.after(e, c, null);
        throw e;
      }
    } catch (SQLException e) {
      throw database.onStatement(action, e);
    }
  }
}

package dev.outboxreplay.examples.notes;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxHealth;
import dev.outboxreplay.OutboxListener;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Status;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.SqliteOutboxStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import okhttp3.HttpUrl;

/**
 * The sample desktop app without a UI toolkit: what its window would call and show. Methods are
 * called on the UI thread ({@link #onUiThread}); listener events reach the UI only through it,
 * and nothing here makes the UI thread wait for the network: {@link #shutdown()} returns at
 * once. The view receives each new status line ("Offline: 3 changes waiting", "All changes
 * synced") and sees problems (conflict, rejected) with a retry button each.
 */
public final class NotesApp {
  private final SqliteDatabase db;
  private final Notes notes;
  private final UserSession session = new UserSession();
  private final NotesSync sync;
  private final IncomingEdits incoming;
  private final ExecutorService ui;
  private final ExecutorService statusReader;
  private final Consumer<String> view;
  private final SqliteOutboxStore store;
  private volatile String statusLine = "";

  /** One conflict or rejected edit, as the window lists it next to a retry button. */
  public record Problem(CommandId commandId, String noteId, String text) {}

  private NotesApp(Path file, HttpUrl baseUrl, NotesSync.Settings settings,
      Consumer<String> view) {
    this.view = view;
    this.ui = Executors.newSingleThreadExecutor(daemon("ui"));
    this.statusReader = Executors.newSingleThreadExecutor(daemon("status-reader"));
    this.db = SqliteDatabase.open(file);
    this.notes = new Notes(db);
    this.incoming = new IncomingEdits(db);
    db.inTransaction(tx -> {
      try (Statement s = tx.createStatement()) {
        return s.execute("CREATE TABLE IF NOT EXISTS account (id INTEGER PRIMARY KEY CHECK "
            + "(id = 1), user_name TEXT NOT NULL)");
      }
    });
    this.store = SqliteOutboxStore.create(db);
    OutboxListener statusLineListener = new OutboxListener() {
      @Override
      public void onTransition(Transition t) {
        refreshStatus();
      }

      @Override
      public void onReplayPaused(Reason reason) {
        refreshStatus();
      }
    };
    this.sync = new NotesSync(store, baseUrl, session,
        (tx, acked, response) -> notes.markSynced(tx, acked), List.of(statusLineListener),
        settings);
    refreshStatus();
  }

  /** Opens the app on {@code file} (for example {@code DataFolder.forApplication("Notes")}). */
  public static NotesApp open(Path file, HttpUrl baseUrl, NotesSync.Settings settings,
      Consumer<String> view) {
    return new NotesApp(file, baseUrl, settings, view);
  }

  /** Runs {@code action} on the UI thread, as a window's event handler would run. */
  public CompletableFuture<Void> onUiThread(Runnable action) {
    return CompletableFuture.runAsync(action, ui);
  }

  /** Runs {@code action} on the UI thread and hands back what it returned. */
  public <T> CompletableFuture<T> callOnUiThread(java.util.function.Supplier<T> action) {
    return CompletableFuture.supplyAsync(action, ui);
  }

  /** The "Save" button. */
  public OutboxRecord save(String noteId, String body) {
    OutboxRecord queued = notes.save(noteId, body);
    sync.onAccepted();
    refreshStatus();
    return queued;
  }

  /** An edit pushed from another device (delivered at least once): CONSUMED or DUPLICATE. */
  public String receive(String device, String messageId, String noteId, String body) {
    return incoming.receive(device, messageId,
        (noteId + "\t" + body).getBytes(java.nio.charset.StandardCharsets.UTF_8))
        .outcome().name();
  }

  /**
   * The login dialog. Signing in as someone else while the last user's edits wait is refused:
   * they would be sent under the new user's account.
   */
  public void signIn(String user, String token) {
    Optional<String> last = lastUser();
    long waiting = sync.health().open();
    if (last.isPresent() && !last.get().equals(user) && waiting > 0) {
      throw new IllegalStateException("sign in as " + last.get() + " first: " + waiting
          + " of their edits wait to be sent");
    }
    db.inTransaction(tx -> {
      try (PreparedStatement ps = tx.prepareStatement("INSERT INTO account (id, user_name) "
          + "VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET user_name = excluded.user_name")) {
        ps.setString(1, user);
        return ps.executeUpdate();
      }
    });
    session.signIn(user, token);
    sync.onSignedIn();
    refreshStatus();
  }

  /** The "Sign out" menu item: replay pauses, edits stay queued. */
  public void signOut() {
    session.signOut();
    refreshStatus();
  }

  /** The retry button next to a problem. */
  public OutboxRecord retry(CommandId commandId) {
    OutboxRecord queued = sync.retry(commandId);
    refreshStatus();
    return queued;
  }

  /**
   * The problems the window lists, oldest first: the edits that ended conflict or rejected, as
   * the outbox holds them (so they survive a restart, and a retried one is gone).
   */
  public List<Problem> problems() {
    List<Problem> problems = new ArrayList<>();
    for (Status ended : List.of(Status.CONFLICT, Status.REJECTED)) {
      for (OutboxRecord r : store.list(ended, 1_000)) {
        problems.add(problemOf(r));
      }
    }
    problems.sort(Comparator.comparing(Problem::commandId));
    return problems;
  }

  /** Health as the replayer reads it now (open, attention, paused reason). */
  public OutboxHealth health() {
    return sync.health();
  }

  /** The status line as last shown. */
  public String statusLine() {
    return statusLine;
  }

  /** Every note: id, body, and whether its last edit reached the server. */
  public List<String> notes() {
    return db.inTransaction(tx -> {
      List<String> all = new ArrayList<>();
      try (Statement s = tx.createStatement();
          ResultSet rs = s.executeQuery("SELECT id, body, sending FROM note ORDER BY id")) {
        while (rs.next()) {
          all.add(rs.getString(1) + (rs.getString(3) == null ? " synced " : " pending ")
              + rs.getString(2));
        }
      }
      return all;
    });
  }

  /**
   * Closing the window: returns at once. The future completes when a request in flight has
   * ended and been recorded and the file is closed; an app may exit before that, and the next
   * start recovers what was in flight.
   */
  public CompletableFuture<Void> shutdown() {
    return sync.closeAsync().whenComplete((done, failure) -> {
      statusReader.shutdown();
      db.close();
      ui.shutdown();
    });
  }

  /** Reads health off the UI thread and shows the line on it, when it changed. */
  private void refreshStatus() {
    try {
      statusReader.execute(() -> {
        String line = render(sync.health());
        ui.execute(() -> {
          if (!line.equals(statusLine)) {
            statusLine = line;
            view.accept(line);
          }
        });
      });
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      // shutting down: no more status lines
    }
  }

  private String render(OutboxHealth health) {
    String waiting = health.open() + (health.open() == 1 ? " change" : " changes") + " waiting";
    long problems = health.needsAttention();
    String attention = problems == 0 ? ""
        : " · " + problems + " need" + (problems == 1 ? "s" : "") + " attention";
    if (!session.signedIn()) {
      return "Signed out: " + waiting + attention;
    }
    if (health.pausedReason().isPresent()) {
      return switch (health.pausedReason().get()) {
        case OFFLINE -> "Offline: " + waiting + attention;
        case CREDENTIALS_REFUSED -> "Sign in again: " + waiting + attention;
        default -> "Paused (" + health.pausedReason().get().wireName() + "): " + waiting
            + attention;
      };
    }
    return (health.open() == 0 ? "All changes synced" : "Syncing: " + waiting) + attention;
  }

  private static Problem problemOf(OutboxRecord ended) {
    String noteId = ended.entityKey();
    String text = ended.status() == Status.CONFLICT
        ? noteId + " was changed elsewhere; your text is kept here"
        : noteId + " could not be sent"
            + (ended.lastError() == null ? "" : " (" + ended.lastError().code() + ")");
    return new Problem(ended.commandId(), noteId, text);
  }

  private Optional<String> lastUser() {
    return db.inTransaction(tx -> {
      try (Statement s = tx.createStatement();
          ResultSet rs = s.executeQuery("SELECT user_name FROM account WHERE id = 1")) {
        return rs.next() ? Optional.of(rs.getString(1)) : Optional.<String>empty();
      }
    });
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, "notes-" + name);
      t.setDaemon(true);
      return t;
    };
  }
}

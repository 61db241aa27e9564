package dev.outboxreplay.examples.notes;

import dev.outboxreplay.RetryPolicy;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import okhttp3.HttpUrl;

/**
 * Drives {@link NotesApp} from lines on standard input, one per button press, and prints what
 * the window would show: {@code status: ...} for each new status line, {@code ok ...} or
 * {@code error ...} for each press. Arguments: the database file, the receiver's base URL, and
 * optionally the first retry interval, attempts and lease, for a run that must see retries end.
 *
 * <pre>
 * sign-in USER TOKEN | sign-out | save NOTE TEXT... | retry NOTE | problems | notes | health
 * receive DEVICE MESSAGE NOTE TEXT... | quit
 * </pre>
 */
public final class NotesAppMain {
  private NotesAppMain() {}

  public static void main(String[] args) throws Exception {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"); // quiet at start
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    NotesSync.Settings settings = NotesSync.Settings.defaults();
    if (args.length > 2) {
      settings = new NotesSync.Settings(RetryPolicy.builder()
          .initialInterval(Duration.parse(args[2])).maxInterval(Duration.parse(args[2]))
          .maxAttempts(Integer.parseInt(args[3])).build(),
          Duration.parse(args[4]), Duration.parse(args[2]));
    }
    NotesApp app = NotesApp.open(Path.of(args[0]), HttpUrl.get(args[1]), settings,
        line -> out.println("status: " + line));
    out.println("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
        StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] words = line.trim().split(" ", 3);
      if (words[0].equals("quit")) {
        CompletableFuture<Void> closed = new CompletableFuture<>();
        app.onUiThread(() -> {
          app.shutdown().whenComplete((done, failure) -> closed.complete(null));
          out.println("closing");                         // the UI thread is free again
        }).join();
        try {
          app.onUiThread(() -> out.println("ui responsive")).join();
        } catch (RejectedExecutionException | CompletionException alreadyClosed) {
          out.println("ui closed");
        }
        closed.join();
        out.println("closed");
        return;
      }
      try {
        String answer = app.callOnUiThread(() -> press(app, words)).join();
        out.println("ok " + answer);
      } catch (CompletionException e) {
        out.println("error " + e.getCause().getMessage());
      }
    }
  }

  private static String press(NotesApp app, String[] words) {
    switch (words[0]) {
      case "sign-in" -> app.signIn(words[1], words[2]);
      case "sign-out" -> app.signOut();
      case "save" -> {
        return app.save(words[1], words[2]).commandId().toString();
      }
      case "retry" -> {
        NotesApp.Problem problem = app.problems().stream()
            .filter(p -> p.noteId().equals(words[1])).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no problem shown for " + words[1]));
        return app.retry(problem.commandId()).status().wireName();
      }
      case "problems" -> {
        return app.problems().stream().map(p -> p.noteId() + ": " + p.text()).toList()
            .toString();
      }
      case "receive" -> {
        String[] rest = words[2].split(" ", 3);
        return app.receive(words[1], rest[0], rest[1], rest[2]);
      }
      case "health" -> {
        return "open=" + app.health().open() + " attention=" + app.health().needsAttention()
            + " paused=" + app.health().pausedReason().map(r -> r.wireName()).orElse("none");
      }
      case "notes" -> {
        return app.notes().toString();
      }
      default -> throw new IllegalArgumentException("unknown: " + words[0]);
    }
    return words[0];
  }
}

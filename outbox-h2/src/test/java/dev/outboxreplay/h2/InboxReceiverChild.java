package dev.outboxreplay.h2;

import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.Inbox;
import dev.outboxreplay.ReceiveResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Child process for {@link InboxCrashTest}: receives the seeded stream (every message one to
 * three times, out of order) into an inbox shared with other processes, printing
 * {@code RECEIVED <id> <outcome> <millis> END} after each receive returns (with how long it
 * took), {@code FAILED <millis> <error>} when one throws (then it goes on with the next
 * delivery, as an app that reports and moves on would), and {@code DONE} at the end. An optional
 * fifth argument paces the deliveries (milliseconds between them), as messages arriving over time;
 * optional sixth and seventh arguments name an inbox failure point and which call of it halts the
 * JVM ({@link Runtime#halt}, exit 137) for {@link InboxFailurePointKillTest}, an eighth the
 * prefix of the message ids (default {@code m}), and a ninth the prefix of a previous receiver's
 * stream to redeliver first.
 */
public final class InboxReceiverChild {
  static final String SCOPE = "profile-1";

  private InboxReceiverChild() {}

  /** The stream of message ids every receiver replays: duplicates included, locally shuffled. */
  static List<String> stream(long seed, int messages) {
    return stream(seed, messages, "m");
  }

  /** {@link #stream(long, int)} with message ids that start with {@code prefix}. */
  static List<String> stream(long seed, int messages, String prefix) {
    SplittableRandom random = new SplittableRandom(seed);
    List<String> deliveries = new ArrayList<>();
    for (int i = 0; i < messages; i++) {
      int copies = 1 + random.nextInt(3);
      for (int k = 0; k < copies; k++) {
        deliveries.add(prefix + i);
      }
    }
    for (int i = deliveries.size() - 1; i > 0; i--) {
      int j = Math.max(0, i - random.nextInt(8));
      String swap = deliveries.get(i);
      deliveries.set(i, deliveries.get(j));
      deliveries.set(j, swap);
    }
    return deliveries;
  }

  static byte[] body(String messageId) {
    return ("ok:" + messageId + "-body").getBytes(StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    Path inboxFile = Path.of(args[0]);
    Path historyFile = Path.of(args[1]);
    long seed = Long.parseLong(args[2]);
    int messages = Integer.parseInt(args[3]);
    long pauseMillis = args.length > 4 ? Long.parseLong(args[4]) : 0; // deliveries arrive paced
    FailureInjector halter = FailureInjector.NONE;
    if (args.length > 6) {
      String label = args[5];
      int haltAt = Integer.parseInt(args[6]);
      int[] calls = {0};
      halter = point -> {
        if (point.label().equals(label) && ++calls[0] == haltAt) {
          System.out.flush();
          Runtime.getRuntime().halt(InboxFailurePointKillTest.HALTED);
        }
      };
    }
    System.out.println("OPENING");
    System.out.flush();
    try (H2Database db = H2Database.open(inboxFile);
        H2Database history = H2Database.open(historyFile)) {
      RatchetStandIn app = new RatchetStandIn();
      Inbox<Connection> inbox = app.openInbox(db, history, halter);
      List<String> deliveries = new ArrayList<>();
      if (args.length > 8) {
        deliveries.addAll(stream(seed, messages, args[8])); // a previous receiver's, redelivered
      }
      deliveries.addAll(stream(seed, messages, args.length > 7 ? args[7] : "m"));
      for (String id : deliveries) {
        long start = System.nanoTime();
        try {
          ReceiveResult result = inbox.receive(SCOPE, id, body(id));
          System.out.println("RECEIVED " + id + " " + result.outcome() + " "
              + (System.nanoTime() - start) / 1_000_000 + " END");
        } catch (RuntimeException e) {
          System.out.println("FAILED " + (System.nanoTime() - start) / 1_000_000 + " "
              + e.toString().replace('\n', ' '));
        }
        System.out.flush();
        if (pauseMillis > 0) {
          Thread.sleep(pauseMillis);
        }
      }
      System.out.println("DONE");
    }
  }
}

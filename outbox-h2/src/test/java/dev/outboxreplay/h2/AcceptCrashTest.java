package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Payload;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.internal.H2File;
import dev.outboxreplay.testkit.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import dev.outboxreplay.testkit.Seeds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Durable accept under real process kills: whatever a child printed after {@code accept}
 * returned must be in the file after SIGKILL, byte for byte, and the file must open every time.
 * The sequences, which reserve values ahead ({@code OutboxSchema.SEQUENCE_CACHE}), must keep
 * increasing across the kills: accept order ({@code seq}) is the order the accepts returned in,
 * and every fencing token is larger than all those handed out before it.
 * Set {@code -Dcrash.seed=N} to replay a run; the seed is printed.
 */
@Execution(ExecutionMode.CONCURRENT) // beside other classes (junit-platform.properties)
@ResourceLock("AcceptCrashTest") // its own methods one after another
class AcceptCrashTest {
  private static final int ROUNDS = 20;

  @TempDir Path dir;

  record Acked(CommandId id, String sha256, int round, int n) {}

  @Test
  void everyAcceptThatReturnedSurvivesSigkillWithIdenticalPayload() throws Exception {
    Stats stats = killRounds("plain");
    System.out.println("AcceptCrashTest: " + ROUNDS + " kills (" + stats.killedWhileOpening
        + " while opening), " + stats.acked + " acknowledged accepts, all present, in accept "
        + "order; " + stats.tokens + " fencing tokens, increasing");
  }

  /**
   * The same kills while another thread compacts the file without pause (H2's retention time 0,
   * so chunks freed by the filler rows the child writes and deletes are moved and the file
   * truncated all the time): every accept that returned is still there, and the file opens
   * after every kill. The verification between kills closes the file at H2's default retention
   * (see {@link #verify}).
   */
  @Test
  void everyAcceptThatReturnedSurvivesSigkillDuringFileCompaction() throws Exception {
    Stats stats = killRounds("compact");
    System.out.println("AcceptCrashTest (compacting): " + ROUNDS + " kills, "
        + stats.roundsCompacted + " of them in rounds whose file had shrunk before the kill ("
        + stats.compactions + " compactions that shrank it, " + stats.bytesShrunk
        + " bytes); " + stats.acked + " acknowledged accepts, all present");
    assertThat(stats.roundsCompacted).as("rounds in which compaction shrank the file before "
        + "the kill (else the kills did not test it)").isGreaterThanOrEqualTo(ROUNDS / 2);
  }

  /** What a series of kill rounds saw. */
  private static final class Stats {
    int killedWhileOpening;
    int acked;
    int tokens;
    int roundsCompacted;
    int compactions;
    long bytesShrunk;
  }

  private Stats killRounds(String mode) throws Exception {
    long seed = Seeds.seed("crash.seed", "AcceptCrashTest");
    SplittableRandom random = new SplittableRandom(seed);
    Path base = dir.resolve("crash-" + mode);
    Map<CommandId, Acked> acked = new LinkedHashMap<>();
    List<Long> tokens = new ArrayList<>();
    Stats stats = new Stats();

    for (int round = 0; round < ROUNDS; round++) {
      // 0 kills right after the child starts opening (possibly mid-migration).
      int killAfter = random.nextInt(8) == 0 ? 0 : random.nextInt(1, 400);
      List<String> lines = new ArrayList<>();
      Path beforeChild = dir.resolve("before-child-" + mode + ".mv.db");
      if (Files.exists(H2File.dataFileOf(base))) {
        Files.copy(H2File.dataFileOf(base), beforeChild, StandardCopyOption.REPLACE_EXISTING);
      }
      try (ChildJvm child = ChildJvm.start(AcceptLoopChild.class,
          dir.resolve("child-" + mode + "-" + round + ".err"), base.toString(),
          Integer.toString(round), mode)) {
        try {
          lines.add(child.nextLine(Duration.ofSeconds(60)));
          for (int i = 0; i < killAfter; i++) {
            lines.add(child.nextLine(Duration.ofSeconds(60)));
          }
        } catch (IllegalStateException e) {
          // the child could not open the file the last verification opened and closed: keep it
          // the child's own words first: the CI log may show only this message, not the cause
          throw new AssertionError("seed " + seed + " round " + round + ": " + e.getMessage()
              + "\n" + keepEvidence(beforeChild, "before-child-" + mode + "-" + seed + "-" + round,
                  "the file as the last verification closed it", acked), e);
        }
        child.kill();
        lines.addAll(child.remainingLines(Duration.ofSeconds(30)));
      }
      if (killAfter == 0) {
        stats.killedWhileOpening++;
      }
      boolean compactedThisRound = false;
      for (String line : lines) {
        String[] f = line.split(" ");
        if (f.length == 6 && f[0].equals("ACK") && f[5].equals("END")) {
          Acked a = new Acked(CommandId.parse(f[1]), f[2], Integer.parseInt(f[3]),
              Integer.parseInt(f[4]));
          acked.put(a.id(), a);
        } else if (f.length == 3 && f[0].equals("TOKEN") && f[2].equals("END")) {
          tokens.add(Long.parseLong(f[1]));
        } else if (f.length == 3 && f[0].equals("COMPACTED") && f[2].equals("END")) {
          compactedThisRound = true;
          stats.compactions++;
          stats.bytesShrunk += Long.parseLong(f[1]);
        }
      }
      if (compactedThisRound) {
        stats.roundsCompacted++;
      }
      try {
        verify(base, acked, seed, round);
      } catch (OutboxStorageException e) {
        // the library refused the file the kill left: keep it with what was acknowledged
        throw new AssertionError("seed " + seed + " round " + round + ": " + e.getMessage()
            + "\n" + keepEvidence(H2File.dataFileOf(base), "after-kill-" + mode + "-" + seed
                + "-" + round, "the file the kill left", acked), e);
      }
    }
    assertThat(tokens).as("seed %d: fencing tokens in the order they were handed out", seed)
        .hasSizeGreaterThan(ROUNDS).isSorted().doesNotHaveDuplicates();
    assertThat(acked).isNotEmpty();
    stats.acked = acked.size();
    stats.tokens = tokens.size();
    return stats;
  }

  private static void verify(Path base, Map<CommandId, Acked> acked, long seed, int round) {
    try (H2Database db = H2Database.builder().file(base).multiProcess(false).build()) {
      try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
        // H2's own retention time again for this session's close, whose compaction runs at the
        // database's retention (the next child sets 0 once it has opened the file): compacted at
        // retention 0 while closing, H2 left files it then opened at an older version
        // (CleanCloseRepairTest; docs/h2-file-handling.md, "A clean close that H2 compacts"), which
        // is H2's case, not a kill's; the library never lowers the retention
        s.execute("SET RETENTION_TIME 45000");
      }
      H2OutboxStore store = H2OutboxStore.create(db);
      for (Acked a : acked.values()) {
        OutboxRecord r = store.find(a.id()).orElse(null);
        assertThat(r).as("seed %d round %d: acknowledged command %s (round %d, n %d) lost",
            seed, round, a.id(), a.round(), a.n()).isNotNull();
        Payload expected = Payload.ofCanonicalBytes(
            AcceptLoopChild.payloadJson(a.round(), a.n()).getBytes(StandardCharsets.UTF_8));
        assertThat(r.payload().bytes()).as("payload of %s", a.id()).isEqualTo(expected.bytes());
        assertThat(r.payload().sha256Hex()).isEqualTo(a.sha256()).isEqualTo(expected.sha256Hex());
        // a child killed between claim and release leaves its row claimed
        assertThat(r.status()).isIn(Status.QUEUED, Status.CLAIMED);
      }
      assertThat(seqOrder(db, acked.keySet())).as("seed %d round %d: accept order", seed, round)
          .containsExactlyElementsOf(acked.keySet());
    } catch (java.sql.SQLException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Copies {@code file} to {@code target/crash-failures/<name>.mv.db}, with the accepts that had
   * returned in {@code <name>.acked.txt}, and describes it for the log (the CI log may be all
   * there is): both copies of H2's store header, the last lines of H2's own chunk listing
   * ({@code MVStoreTool.info}) and how many of the returned accepts plain H2 finds in another
   * copy, which tells whether the version H2 can read lost any of them.
   */
  static String keepEvidence(Path file, String name, String what,
      Map<CommandId, Acked> acked) {
    StringBuilder text = new StringBuilder();
    try {
      Path kept = Path.of("target", "crash-failures", name + ".mv.db");
      Files.createDirectories(kept.getParent());
      Files.copy(file, kept, StandardCopyOption.REPLACE_EXISTING);
      List<String> ids = new ArrayList<>();
      for (Acked a : acked.values()) {
        ids.add(a.id() + " round " + a.round() + " n " + a.n());
      }
      Files.write(kept.resolveSibling(name + ".acked.txt"), ids);
      text.append(what).append(" is kept at ").append(kept.toAbsolutePath()).append(", ")
          .append(acked.size()).append(" returned accepts beside it\n")
          .append(plainH2Finds(file, acked.keySet())).append('\n');
      byte[] head = new byte[8192];
      try (java.io.InputStream in = Files.newInputStream(file)) {
        int n = in.readNBytes(head, 0, head.length);
        for (int at = 0; at < n; at += 4096) {
          String block = new String(head, at, Math.min(4096, n - at),
              StandardCharsets.ISO_8859_1);
          text.append("store header copy ").append(at / 4096 + 1).append(": ")
              .append(block.substring(0, Math.max(0, block.indexOf('\n')))).append('\n');
        }
      }
      java.io.StringWriter info = new java.io.StringWriter();
      org.h2.mvstore.MVStoreTool.info(file.toString(), info);
      List<String> infoLines = info.toString().lines().toList();
      text.append("MVStoreTool.info, last lines:\n").append(String.join("\n",
          infoLines.subList(Math.max(0, infoLines.size() - 40), infoLines.size())));
    } catch (Exception | AssertionError e) {
      text.append("(describing it failed: ").append(e).append(')');
    }
    return text.toString();
  }

  /**
   * What plain H2 (no library checks or repairs) opens in a copy of {@code file}: its version and
   * how many of {@code ids} are in it.
   */
  private static String plainH2Finds(Path file, java.util.Set<CommandId> ids) {
    try {
      Path copyDir = Files.createTempDirectory("crash-evidence");
      Path copy = copyDir.resolve("copy.mv.db");
      Files.copy(file, copy);
      long version;
      org.h2.mvstore.MVStore store = new org.h2.mvstore.MVStore.Builder()
          .fileName(copy.toString()).readOnly().open();
      try {
        version = store.getCurrentVersion();
      } finally {
        store.close();
      }
      String url = "jdbc:h2:file:" + copyDir.resolve("copy") + ";IFEXISTS=TRUE";
      int found = 0;
      try (Connection c = java.sql.DriverManager.getConnection(url, "sa", "");
          Statement s = c.createStatement();
          java.sql.ResultSet rs = s.executeQuery("SELECT command_id FROM outbox_command")) {
        while (rs.next()) {
          if (ids.contains(new CommandId(rs.getObject(1, java.util.UUID.class)))) {
            found++;
          }
        }
      } finally {
        try (var walk = Files.walk(copyDir)) {
          walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
      return "plain H2 reads a copy at version " + version + ", with " + found + " of the "
          + ids.size() + " returned accepts";
    } catch (Exception e) {
      return "plain H2 on a copy: " + e;
    }
  }

  /** The given commands in {@code seq} order. */
  private static List<CommandId> seqOrder(H2Database db, java.util.Set<CommandId> ids)
      throws java.sql.SQLException {
    List<CommandId> order = new ArrayList<>();
    try (java.sql.Connection c = db.dataSource().getConnection();
        java.sql.ResultSet rs = c.createStatement().executeQuery(
            "SELECT command_id FROM outbox_command ORDER BY seq")) {
      while (rs.next()) {
        CommandId id = new CommandId(rs.getObject(1, java.util.UUID.class));
        if (ids.contains(id)) {
          order.add(id);
        }
      }
    }
    return order;
  }
}

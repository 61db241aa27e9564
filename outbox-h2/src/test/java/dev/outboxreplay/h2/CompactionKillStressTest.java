package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.CommandId;
import dev.outboxreplay.h2.internal.H2File;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Long run, not part of the default test command: {@code mvn -pl outbox-h2 test
 * -Dtest=CompactionKillStressTest -Dstress.compactionKills=200 [-Dstress.retention=0|N|default]
 * [-Dstress.compactor=false] [-Dstress.verifyRetention=45000] [-Dstress.encrypted=true]}. {@link AcceptLoopChild} in its
 * compacting mode (a filler row written and deleted per accept, H2 retention as given, a thread
 * compacting without pause unless turned off) is killed with SIGKILL after 1 to 400 accepts;
 * after every kill the file must open and hold every accept that returned. A file that fails is
 * kept under {@code target/stress/} and the run goes on with a new file, so the printed count of
 * failed kills measures a rate. With {@code stress.verifyRetention} the verification sets that
 * retention before it reads and closes, as {@code AcceptCrashTest}'s does. Set {@code
 * -Dstress.seed=N} to replay the kill points.
 */
@EnabledIfSystemProperty(named = "stress.compactionKills", matches = "\\d+")
class CompactionKillStressTest {
  @TempDir Path dir;

  @Test
  void everyKillLeavesAFileThatOpensWithEveryReturnedAccept() throws Exception {
    int kills = Integer.getInteger("stress.compactionKills");
    String retention = System.getProperty("stress.retention", "0");
    String verifyRetention = System.getProperty("stress.verifyRetention");
    boolean compactor = Boolean.parseBoolean(System.getProperty("stress.compactor", "true"));
    boolean encrypted = Boolean.getBoolean("stress.encrypted");
    long seed = Seeds.seed("stress.seed", "CompactionKillStressTest");
    SplittableRandom random = new SplittableRandom(seed);
    List<String> failures = new ArrayList<>();
    int fileNo = 0;
    Path base = dir.resolve("crash-" + fileNo);
    Map<CommandId, String> acked = new LinkedHashMap<>();
    long accepts = 0;
    int compactions = 0;
    int roundsCompacted = 0;
    for (int round = 0; round < kills; round++) {
      // 0 kills right after the child starts opening, as in AcceptCrashTest
      int killAfter = random.nextInt(8) == 0 ? 0 : random.nextInt(1, 400);
      List<String> lines = new ArrayList<>();
      Path beforeChild = dir.resolve("before-child.mv.db");
      if (Files.exists(H2File.dataFileOf(base))) {
        Files.copy(H2File.dataFileOf(base), beforeChild, StandardCopyOption.REPLACE_EXISTING);
      }
      String childFailure = null;
      try (ChildJvm child = ChildJvm.start(AcceptLoopChild.class, dir.resolve("child.err"),
          base.toString(), Integer.toString(round), "compact", retention,
          compactor ? "compactor" : "nocompactor", encrypted ? "encrypted" : "plain")) {
        try {
          for (int i = 0; i <= killAfter; i++) {
            lines.add(child.nextLine(Duration.ofSeconds(60)));
          }
        } catch (IllegalStateException e) {
          childFailure = "kill " + round + ": the child could not go on: " + e.getMessage();
        }
        child.kill();
        lines.addAll(child.remainingLines(Duration.ofSeconds(30)));
      }
      if (childFailure != null) {
        keep(beforeChild, "compaction-" + seed + "-" + round + "-before-child.mv.db",
            childFailure, failures, acked);
        fileNo++;
        base = dir.resolve("crash-" + fileNo);
        acked.clear();
        continue;
      }
      boolean compactedThisRound = false;
      for (String line : lines) {
        String[] f = line.split(" ");
        if (f.length == 6 && f[0].equals("ACK") && f[5].equals("END")) {
          acked.put(CommandId.parse(f[1]), "round " + f[3] + " n " + f[4]);
          accepts++;
        } else if (f.length == 3 && f[0].equals("COMPACTED") && f[2].equals("END")) {
          compactions++;
          if (!compactedThisRound) {
            compactedThisRound = true;
            roundsCompacted++;
          }
        }
      }
      Path asKilled = dir.resolve("as-killed.mv.db");
      if (!Files.exists(H2File.dataFileOf(base))) {
        continue; // killed before it created the new file: nothing to verify
      }
      Files.copy(H2File.dataFileOf(base), asKilled, StandardCopyOption.REPLACE_EXISTING);
      String failure = null;
      H2Database.Builder opening = H2Database.builder().file(base).multiProcess(false);
      if (encrypted) {
        opening.encryptionKey(AcceptLoopChild.TEST_KEY);
      }
      try (H2Database db = opening.build()) {
        if (verifyRetention != null) {
          try (Connection c = db.dataSource().getConnection();
              Statement s = c.createStatement()) {
            s.execute("SET RETENTION_TIME " + Integer.parseInt(verifyRetention));
          }
        }
        H2OutboxStore store = H2OutboxStore.create(db);
        int lost = 0;
        for (CommandId id : acked.keySet()) {
          if (store.find(id).isEmpty()) {
            lost++;
          }
        }
        if (lost > 0) {
          failure = "kill " + round + ": " + lost + " of " + acked.size() + " accepts lost";
        }
      } catch (RuntimeException | SQLException e) {
        failure = "kill " + round + ": " + e.getMessage();
      }
      if (failure != null) {
        keep(asKilled, "compaction-" + seed + "-" + round + ".mv.db", failure, failures, acked);
        fileNo++;
        base = dir.resolve("crash-" + fileNo);
        acked.clear();
      }
    }
    System.out.printf("CompactionKillStressTest seed %d retention %s compactor %s encrypted %s: "
        + "%d kills, %d accepts returned, %d compactions that shrank the file, in %d rounds; %d "
        + "kills failed%n", seed, retention, compactor, encrypted, kills, accepts, compactions,
        roundsCompacted, failures.size());
    assertThat(failures).as("seed %d", seed).isEmpty();
  }

  /**
   * Copies {@code file} to {@code target/stress/name}, writes the accepts that had returned for
   * it (command id, round and number, in the order they returned) to {@code name.acked.txt}
   * beside it, and records {@code failure}.
   */
  private static void keep(Path file, String name, String failure, List<String> failures,
      Map<CommandId, String> acked) throws java.io.IOException {
    Path kept = Path.of("target", "stress", name);
    Files.createDirectories(kept.getParent());
    Files.copy(file, kept, StandardCopyOption.REPLACE_EXISTING);
    List<String> lines = new ArrayList<>();
    acked.forEach((id, where) -> lines.add(id + " " + where));
    Files.write(kept.resolveSibling(name + ".acked.txt"), lines);
    failures.add(failure + " (kept " + kept + ")");
    System.out.println("CompactionKillStressTest: " + failure);
  }
}

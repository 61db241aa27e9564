package dev.outboxreplay.h2;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.outboxreplay.testkit.jdbc.SimulatedOutboxFile;
import dev.outboxreplay.testkit.sim.Choices;
import dev.outboxreplay.testkit.sim.OutboxSimulation;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The simulated schedules of {@link OutboxSimulationTest}, built from a fuzzer's bytes instead of
 * a seed: every decision (the next step, each request's fate, where a life crashes) is the next
 * value the {@link FuzzedDataProvider} gives. In the normal test run the committed inputs under
 * {@code OutboxSimulationFuzzTestInputs} are replayed; {@code scripts/fuzz outbox-h2
 * OutboxSimulationFuzzTest 10m} searches for new ones.
 */
class OutboxSimulationFuzzTest {
  private static SimulatedOutboxFile<H2Database> database;

  @BeforeAll
  static void openOnce() throws Exception {
    Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "sim");
    database = H2SimulatedFiles.outbox(dir.resolve("fuzzed"));
  }

  @AfterAll
  static void close() {
    database.close();
  }

  @FuzzTest(maxDuration = "60s")
  void anyScheduleKeepsTheInvariants(FuzzedDataProvider data) {
    OutboxSimulation.run(new Choices() {
      @Override
      public int pick(int bound) {
        return bound == 1 ? 0 : data.consumeInt(0, bound - 1);
      }

      @Override
      public long nextSeed() {
        return data.consumeLong();
      }
    }, database, 30);
  }
}

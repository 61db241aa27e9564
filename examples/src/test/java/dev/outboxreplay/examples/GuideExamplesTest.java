package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.ReceiveResult;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.http.OkHttpTransport;
import dev.outboxreplay.sqlite.SqliteDatabase;
import dev.outboxreplay.sqlite.SqliteOutboxStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guide's ({@code docs/guide.md}) Java blocks are {@link GuideExamples}' marked regions, line for line, and each
 * one runs against real parts.
 */
class GuideExamplesTest {
  private static final Path GUIDE = Path.of("..", "docs", "guide.md");
  private static final Path SOURCE =
      Path.of("src", "test", "java", "dev", "outboxreplay", "examples", "GuideExamples.java");

  @TempDir Path dir;

  @Test
  void theGuideShowsExactlyTheMarkedRegionsInOrder() throws Exception {
    List<String> guide = blocks(Files.readAllLines(GUIDE), "```java", "```");
    List<String> source = blocks(Files.readAllLines(SOURCE), "// GUIDE:begin", "// GUIDE:end");
    assertThat(source).as("marked regions in GuideExamples").hasSize(7);
    assertThat(guide).as("the guide's java blocks, against GuideExamples' marked regions")
        .containsExactlyElementsOf(source);
  }

  @Test
  void quickStartCommitsTheNoteAndItsCommandTogetherAndReplayDeliversIt() throws Exception {
    Path app = dir.resolve("app");
    OutboxRecord queued = GuideExamples.quickStart(app);
    assertThat(queued.status()).isEqualTo(Status.QUEUED);
    assertThat(GuideExamples.quickStart(app).commandId()).as("a second run, a new intent")
        .isNotEqualTo(queued.commandId());

    try (GuideExamples.RunningServer running = GuideExamples.server(dir.resolve("server"));
        H2Database db = H2Database.open(app)) {
      H2OutboxStore store = H2OutboxStore.create(db);
      Optional<OutboxRecord> outcome = GuideExamples.replay(store,
          HttpUrl.get(running.server().baseUrl()), SessionRuntime.ANONYMOUS, queued.commandId());
      assertThat(outcome).get().extracting(OutboxRecord::status).isEqualTo(Status.ACKED);
      assertThat(store.countByStatus()).containsEntry(Status.ACKED, 2L);
      assertThat(single(db, "SELECT COUNT(*) FROM note WHERE synced")).isEqualTo(1);
      assertThat(single(running.serverDb(), "SELECT COUNT(*) FROM applied_note")).isEqualTo(2);
    }
  }

  @Test
  void theInboxConsumesOnceAndProjects() {
    try (H2Database cryptoDb = H2Database.open(dir.resolve("crypto"))) {
      byte[] plain = "hello".getBytes(StandardCharsets.UTF_8);
      byte[] ciphertext = plain.clone();
      for (int i = 0; i < ciphertext.length; i++) {
        ciphertext[i] ^= 0x5a;
      }
      Map<String, byte[]> history = new HashMap<>();
      assertThat(GuideExamples.inbox(cryptoDb, ciphertext, history).outcome())
          .isEqualTo(ReceiveResult.Outcome.CONSUMED);
      assertThat(history).containsOnlyKeys("alice@laptop/msg-17");
      assertThat(history.get("alice@laptop/msg-17")).isEqualTo(plain);
      assertThat(GuideExamples.inbox(cryptoDb, ciphertext, history).outcome())
          .isEqualTo(ReceiveResult.Outcome.DUPLICATE);
    }
  }

  @Test
  void metricsCountTheReplay() throws Exception {
    try (GuideExamples.RunningServer running = GuideExamples.server(dir.resolve("server"));
        H2Database db = H2Database.open(dir.resolve("app"))) {
      H2OutboxStore store = H2OutboxStore.create(db);
      dev.outboxreplay.Outbox.builder(store).build()
          .accept(OutboxCommand.of("note.put", "note-1", Map.of("id", "note-1")));
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      GuideExamples.metrics(store,
          OkHttpTransport.builder(HttpUrl.get(running.server().baseUrl())).build(), registry);
      assertThat(registry.get("outbox.transitions").tag("to", "acked").counter().count())
          .isEqualTo(1.0);
      assertThat(registry.get("outbox.commands").tag("status", "acked").gauge().value())
          .isEqualTo(1.0);
    }
  }

  @Test
  void theSqliteStartCommitsTheNoteAndItsCommandTogetherInOneSqliteFile() throws Exception {
    OutboxRecord queued = GuideExamples.sqliteStart(dir.resolve("lite"));
    assertThat(dir.resolve("lite.sqlite")).exists();
    try (SqliteDatabase db = SqliteDatabase.open(dir.resolve("lite"));
        Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT body FROM note WHERE id = 'note-1'")) {
      assertThat(SqliteOutboxStore.create(db).find(queued.commandId())).get()
          .extracting(OutboxRecord::status).isEqualTo(Status.QUEUED);
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1)).isEqualTo("buy milk");
    }
  }

  @Test
  void anApplicationPoolGetsTheAcceptInItsOwnTransaction() throws Exception {
    OutboxRecord accepted = GuideExamples.ownDataSource(dir.resolve("own"));
    try (H2Database db = H2Database.open(dir.resolve("own"))) {
      assertThat(H2OutboxStore.create(db).find(accepted.commandId())).get()
          .extracting(OutboxRecord::status).isEqualTo(Status.QUEUED);
    }
  }

  /** The blocks between a line starting with {@code begin} and one starting with {@code end}. */
  static List<String> blocks(List<String> lines, String begin, String end) {
    List<String> blocks = new ArrayList<>();
    List<String> current = null;
    for (String line : lines) {
      String trimmed = line.strip();
      if (current == null && trimmed.equals(begin)) {
        current = new ArrayList<>();
      } else if (current != null && trimmed.equals(end)) {
        blocks.add(dedent(current));
        current = null;
      } else if (current != null) {
        current.add(line);
      }
    }
    return blocks;
  }

  private static String dedent(List<String> lines) {
    int indent = lines.stream().filter(l -> !l.isBlank())
        .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    StringBuilder text = new StringBuilder();
    for (String line : lines) {
      text.append(line.isBlank() ? "" : line.substring(indent).stripTrailing()).append('\n');
    }
    return text.toString();
  }

  private static long single(H2Database db, String sql) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        ResultSet rs = c.createStatement().executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}

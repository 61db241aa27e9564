package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxreplay.examples.cli.OutboxTool;
import dev.outboxreplay.server.NotesApplication;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.ListeningSockets;
import dev.outboxreplay.testkit.LoopbackPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code outbox serve --postgres}: nodes on one shared PostgreSQL, started by the tool in their
 * own JVMs, listening on loopback only, each taking part of a client's commands; and the
 * refusals that keep a password off the command line and every node named.
 */
class ServePostgresTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void twoNodesStartedByTheToolShareOneDatabaseAndListenOnLoopbackOnly() throws Exception {
    try (LoopbackPostgres postgres = LoopbackPostgres.start()) {
      String database = postgres.newDatabase();
      String url = postgres.jdbcUrl(database) + "?user=postgres";
      try (ChildJvm one = ChildJvm.start(OutboxTool.class, dir.resolve("one.err"), "serve",
              "--postgres", url, "--node", "node-1");
          ChildJvm two = ChildJvm.start(OutboxTool.class, dir.resolve("two.err"), "serve",
              "--postgres", url, "--node", "node-2")) {
        String first = one.nextLine(WAIT);
        String second = two.nextLine(WAIT);
        assertThat(first).startsWith("serving http://127.0.0.1:").contains("as node node-1");
        assertThat(second).contains("as node node-2");
        for (ChildJvm node : new ChildJvm[] {one, two}) {
          if (ListeningSockets.available()) {
            assertThat(ListeningSockets.of(node.pid())).isNotEmpty()
                .allSatisfy(l -> assertThat(l.address().isLoopbackAddress()).as("%s", l).isTrue());
          }
        }
        String[] urls = {baseUrl(first), baseUrl(second)};
        for (int client = 0; client < 2; client++) {
          String db = dir.resolve("client-" + client).toString();
          for (int i = 0; i < 5; i++) {
            assertThat(ToolRun.of("enqueue", "--db", db, "--operation", "note.put", "--entity",
                "c" + client + "-n" + i, "--payload",
                "{\"entity\":\"c" + client + "-n" + i + "\",\"seq\":1}").exit()).isZero();
          }
          ToolRun replay = ToolRun.of("replay", "--db", db, "--url", urls[client],
              "--until-drained", "--timeout", "1m");
          assertThat(replay.exit()).as(replay.err()).isZero();
        }
      }
      try (HikariDataSource pool = postgres.pool(database, 1)) {
        NotesApplication notes = NotesApplication.onPostgres(pool);
        assertThat(notes.totalEffects()).as("both nodes wrote to the one database")
            .isEqualTo(10);
        assertThat(notes.keysAppliedMoreThanOnce()).isZero();
      }
    }
  }

  @Test
  void aPasswordOnTheCommandLineAnUnnamedNodeOrTwoDatabasesAreRefusedInOneLine()
      throws Exception {
    ToolRun password = ToolRun.of("serve", "--postgres",
        "jdbc:postgresql://127.0.0.1:1/receiver?user=app&password=s3cret", "--node", "n1");
    assertThat(password.exit()).isEqualTo(2);
    assertThat(password.err()).contains("--postgres-password-file or PGPASSWORD")
        .doesNotContain("s3cret");
    ToolRun unnamed = ToolRun.of("serve", "--postgres", "jdbc:postgresql://127.0.0.1:1/r");
    assertThat(unnamed.exit()).isEqualTo(2);
    assertThat(unnamed.err()).contains("--node NAME is required with --postgres");
    ToolRun both = ToolRun.of("serve", "--db", dir.resolve("server").toString(), "--postgres",
        "jdbc:postgresql://127.0.0.1:1/r", "--node", "n1");
    assertThat(both.exit()).isEqualTo(2);
    ToolRun unreachable = ToolRun.of("serve", "--postgres",
        "jdbc:postgresql://127.0.0.1:1/receiver?user=app&connectTimeout=2", "--node", "n1");
    assertThat(unreachable.exit()).as(unreachable.err()).isEqualTo(2);
    assertThat(unreachable.err()).contains("cannot reach PostgreSQL").doesNotContain("\tat ");
    try (var files = Files.list(dir)) {
      assertThat(files).as("nothing created for a refused serve").isEmpty();
    }
  }

  private static String baseUrl(String servingLine) {
    return servingLine.substring("serving ".length(), servingLine.indexOf(" as node"));
  }
}

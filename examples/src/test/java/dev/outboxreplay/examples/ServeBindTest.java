package dev.outboxreplay.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.examples.cli.OutboxTool;
import dev.outboxreplay.testkit.ChildJvm;
import dev.outboxreplay.testkit.ListeningSockets;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code outbox serve --bind}: the server listens on 127.0.0.1 unless told otherwise, on another
 * loopback address when named, and an address other machines reach needs {@code --tokens} and
 * prints a warning. Nothing here listens beyond loopback: 192.0.2.1 (TEST-NET-1, RFC 5737) is
 * never an address of this machine, so the tool's bind to it fails after the warning.
 */
class ServeBindTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String ELSEWHERE = "192.0.2.1";

  @TempDir Path dir;

  @Test
  void anotherLoopbackAddressIsServedAndAClientsCommandsAreAckedThere() throws Exception {
    try (ChildJvm serve = ChildJvm.start(OutboxTool.class, dir.resolve("serve.err"), "serve",
        "--db", dir.resolve("server").toString(), "--bind", "127.0.0.2")) {
      String serving = serve.nextLine(WAIT);
      assertThat(serving).startsWith("serving http://127.0.0.2:");
      String url = serving.substring("serving ".length(), serving.indexOf(" (POST"));
      int port = Integer.parseInt(url.substring(url.lastIndexOf(':') + 1));
      if (ListeningSockets.available()) {
        assertThat(ListeningSockets.of(serve.pid()))
            .contains(new ListeningSockets.Listener(InetAddress.getByName("127.0.0.2"), port))
            .allSatisfy(l -> assertThat(l.address().isLoopbackAddress()).as("%s", l).isTrue());
      }
      String db = dir.resolve("client").toString();
      assertThat(ToolRun.of("enqueue", "--db", db, "--operation", "note.put", "--entity", "n1",
          "--payload", "{\"entity\":\"n1\",\"seq\":1}").exit()).isZero();
      ToolRun replay = ToolRun.of("replay", "--db", db, "--url", url, "--until-drained",
          "--timeout", "1m");
      assertThat(replay.exit()).as(replay.err()).isZero();
      assertThat(Files.readString(dir.resolve("serve.err"))).doesNotContain("--bind");
    }
  }

  @Test
  void anAddressOtherMachinesReachNeedsTokensAndIsServedOnlyAfterAWarning() throws Exception {
    ToolRun open = ToolRun.of("serve", "--db", dir.resolve("server").toString(), "--bind",
        ELSEWHERE);
    assertThat(open.exit()).isEqualTo(2);
    assertThat(open.err()).contains("--bind " + ELSEWHERE + " is reachable from other machines")
        .contains("--tokens");
    Path tokens = Files.writeString(dir.resolve("tokens"), "tok-7d2e tenant-a\n");
    Files.setPosixFilePermissions(tokens, PosixFilePermissions.fromString("rw-------"));
    ToolRun authed = ToolRun.of("serve", "--db", dir.resolve("server").toString(), "--bind",
        ELSEWHERE, "--tokens", tokens.toString());
    assertThat(authed.exit()).as("this machine has no such address").isEqualTo(2);
    assertThat(authed.err())
        .contains("warning: --bind " + ELSEWHERE + " lets other machines reach this server")
        .contains("cannot serve on " + ELSEWHERE + ":0")
        .doesNotContain("tok-7d2e").doesNotContain("\tat ");
    try (var files = Files.list(dir)) {
      assertThat(files).as("no database created for a refused serve")
          .containsExactly(tokens);
    }
  }

  @Test
  void aHostNameOrAMalformedAddressIsRefusedWithoutALookup() {
    for (String bad : new String[] {"localhost", "300.1.1.1", "127.0.0.1:80", ""}) {
      ToolRun r = ToolRun.of("serve", "--db", dir.resolve("server").toString(), "--bind", bad);
      assertThat(r.exit()).as(bad).isEqualTo(2);
      assertThat(r.err()).as(bad).contains("--bind takes an IP address");
    }
  }
}

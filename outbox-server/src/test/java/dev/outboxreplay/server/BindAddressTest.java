package dev.outboxreplay.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.HttpContract;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.testkit.ListeningSockets;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the ready-made receiver listens: 127.0.0.1 unless the builder names another address; an
 * address other machines reach is refused while tenants are unauthenticated, and otherwise only
 * tried. No test here listens beyond loopback: 192.0.2.1 (TEST-NET-1, RFC 5737) is never an
 * address of this machine, so binding it fails.
 */
class BindAddressTest {
  /** A documentation address no host is given: a bind to it fails with "cannot assign". */
  private static final String ELSEWHERE = "192.0.2.1";

  @TempDir Path dir;
  H2Database db;
  NotesApplication notes;

  @BeforeEach
  void open() {
    db = H2Database.open(dir.resolve("server"));
    notes = new NotesApplication(db);
  }

  @AfterEach
  void close() {
    db.close();
  }

  private IdempotentServer.Builder builder() {
    return IdempotentServer.builder().database(db)
        .handler(NotesApplication.OPERATION, notes.handler());
  }

  @Test
  void anotherLoopbackAddressIsListenedOnAloneAndNamedInTheBaseUrl() throws Exception {
    InetAddress second = InetAddress.getByName("127.0.0.2");
    try (IdempotentServer server = builder().bindAddress(second).start()) {
      assertThat(server.baseUrl()).isEqualTo("http://127.0.0.2:" + server.port());
      if (ListeningSockets.available()) {
        assertThat(ListeningSockets.of(ProcessHandle.current().pid()))
            .filteredOn(l -> l.port() == server.port())
            .containsExactly(new ListeningSockets.Listener(second, server.port()));
      }
      HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
      HttpResponse<String> put = client.send(HttpRequest.newBuilder(
              URI.create(server.baseUrl() + "/note.put"))
          .header(HttpContract.IDEMPOTENCY_KEY, HttpContract.toStructuredString("k-1"))
          .timeout(Duration.ofSeconds(30))
          .POST(HttpRequest.BodyPublishers.ofString("{\"entity\":\"n\",\"seq\":1}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(put.statusCode()).as(put.body()).isEqualTo(201);
      assertThat(notes.effectCount(HttpContract.DEFAULT_TENANT, "k-1")).isEqualTo(1);
    }
  }

  @Test
  void theDefaultIsTheLoopbackAddressAndOnlyNonLoopbackAddressesReachOtherMachines()
      throws Exception {
    try (IdempotentServer server = builder().start()) {
      assertThat(server.baseUrl()).isEqualTo("http://127.0.0.1:" + server.port());
    }
    assertThat(IdempotentServer.reachableFromOtherMachines(InetAddress.getByName("127.0.0.1")))
        .isFalse();
    assertThat(IdempotentServer.reachableFromOtherMachines(InetAddress.getByName("::1")))
        .isFalse();
    assertThat(IdempotentServer.reachableFromOtherMachines(InetAddress.getByName("0.0.0.0")))
        .as("the wildcard").isTrue();
    assertThat(IdempotentServer.reachableFromOtherMachines(InetAddress.getByName(ELSEWHERE)))
        .isTrue();
  }

  @Test
  void anAddressOtherMachinesReachIsRefusedWhileAnyClientMayNameItsTenant() throws Exception {
    InetAddress elsewhere = InetAddress.getByName(ELSEWHERE);
    assertThatThrownBy(() -> builder().bindAddress(elsewhere).start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("refusing to listen on " + ELSEWHERE)
        .hasMessageContaining("tenants(...)");
    assertThat(db.dataSource().getConnection().getMetaData().getTables(null, null,
        "SERVER_IDEMPOTENCY", null).next()).as("refused before the records were opened")
        .isFalse();
  }

  @Test
  void withAuthenticatedTenantsAnAddressOtherMachinesReachIsTried() throws Exception {
    InetAddress elsewhere = InetAddress.getByName(ELSEWHERE);
    assertThatThrownBy(() -> builder().bindAddress(elsewhere)
        .tenants(TenantResolver.bearerTokens(Map.of("token-1", "t1"))).start())
        .isInstanceOf(IOException.class)
        .hasMessageContaining(ELSEWHERE);
  }
}

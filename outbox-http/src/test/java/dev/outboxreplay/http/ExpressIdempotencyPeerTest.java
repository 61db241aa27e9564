package dev.outboxreplay.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reason;
import dev.outboxreplay.Status;
import dev.outboxreplay.TransportResult.Kind;
import dev.outboxreplay.testkit.Seeds;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine against a stand-in for an Express receiver behind express-idempotency 1.0.6
 * ({@link ExpressIdempotencyPeer}): one test per behaviour of that receiver, each with what a
 * user configures for it (docs/http-contract.md, "Receivers in the wild").
 */
class ExpressIdempotencyPeerTest {
  @TempDir Path dir;

  @Test
  void answersLostAfterTheCommitAreRecoveredByResendingWithTheSameKey() throws Exception {
    long seed = Seeds.seed("express.seed", "express-peer");
    SplittableRandom random = new SplittableRandom(seed);
    try (ExpressIdempotencyPeer peer = new ExpressIdempotencyPeer(() -> {
      synchronized (random) {
        return random.nextInt(5) == 0;
      }
    }); PeerClient client = new PeerClient(dir)) {
      List<OutboxRecord> accepted = new ArrayList<>();
      for (int seq = 0; seq < 20; seq++) {
        for (int e = 0; e < 10; e++) {
          accepted.add(client.accept("entity-" + e, seq));
        }
      }
      client.replay(client.transport(peer).classify(409, Kind.IN_PROGRESS).build(), 100);
      assertThat(client.store.countByStatus().get(Status.ACKED)).as("seed %d", seed)
          .isEqualTo(200);
      assertThat(peer.totalEffects()).as("seed %d", seed).isEqualTo(200);
      for (OutboxRecord r : accepted) {
        assertThat(peer.effects(r.idempotencyKey().toString())).isZero(); // keyed by header
        assertThat(peer.effects("\"" + r.idempotencyKey() + "\"")).isEqualTo(1);
      }
      assertThat(accepted).as("some answers were lost and the resend got the stored one")
          .anyMatch(r -> client.reasons(r).contains(Reason.OUTCOME_UNKNOWN));
      for (int e = 0; e < 10; e++) {
        assertThat(peer.arrivalOrder("entity-" + e)).as("seed %d", seed)
            .isEqualTo(LongStream.range(0, 20).boxed().toList());
      }
    }
  }

  @Test
  void itsInProgressAnswerEndsACommandUnlessClassifiedInProgress() throws Exception {
    // every first answer is lost; the stored one shows only after two more requests
    try (ExpressIdempotencyPeer peer = new ExpressIdempotencyPeer(() -> true);
        PeerClient client = new PeerClient(dir)) {
      OutboxRecord ended = client.accept("a", 1);
      peer.stillRunning(quoted(ended), 2);
      client.replay(client.transport(peer).build(), 20);
      assertThat(client.status(ended)).as("its HTML 409 is a conflict by default")
          .isEqualTo(Status.CONFLICT);

      OutboxRecord waited = client.accept("b", 1);
      peer.stillRunning(quoted(waited), 2);
      client.replay(client.transport(peer).classify(409, Kind.IN_PROGRESS).build(), 20);
      assertThat(client.status(waited)).isEqualTo(Status.ACKED);
      assertThat(client.reasons(waited)).containsSubsequence(Reason.OUTCOME_UNKNOWN,
          Reason.IN_PROGRESS, Reason.IN_PROGRESS, Reason.ACKED);
      assertThat(peer.effects(quoted(waited))).isEqualTo(1);
      assertThat(client.applied.get(waited.commandId().toString())).as("the stored answer")
          .hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(201));
    }
  }

  @Test
  void aKeyMisusedWithAnotherBodyEndsTheCommandRejectedOrAsConflictWhenClassified()
      throws Exception {
    try (ExpressIdempotencyPeer peer = new ExpressIdempotencyPeer(() -> false);
        PeerClient client = new PeerClient(dir)) {
      OutboxRecord rejected = client.accept("a", 1);
      peer.alreadyUsed(quoted(rejected), "/note.put", "{\"entity\":\"a\",\"seq\":99}");
      client.replay(client.transport(peer).build(), 5);
      assertThat(client.status(rejected)).as("417 is another 4xx").isEqualTo(Status.REJECTED);

      OutboxRecord conflict = client.accept("b", 1);
      peer.alreadyUsed(quoted(conflict), "/note.put", "{\"entity\":\"b\",\"seq\":99}");
      client.replay(client.transport(peer).classify(417, Kind.CONFLICT).build(), 5);
      assertThat(client.status(conflict)).isEqualTo(Status.CONFLICT);
      assertThat(peer.totalEffects()).isZero();
    }
  }

  @Test
  void aFailedHandlerForgetsTheKeySoTheRetryRunsItOnce() throws Exception {
    try (ExpressIdempotencyPeer peer = new ExpressIdempotencyPeer(() -> false);
        PeerClient client = new PeerClient(dir)) {
      OutboxRecord r = client.accept("a", 1);
      peer.failOnce(quoted(r));
      client.replay(client.transport(peer).build(), 10);
      assertThat(client.status(r)).isEqualTo(Status.ACKED);
      assertThat(client.reasons(r)).containsSubsequence(Reason.RETRYABLE_RESPONSE, Reason.ACKED);
      assertThat(peer.effects(quoted(r))).isEqualTo(1);
    }
  }

  private static String quoted(OutboxRecord r) {
    return "\"" + r.idempotencyKey() + "\"";
  }
}

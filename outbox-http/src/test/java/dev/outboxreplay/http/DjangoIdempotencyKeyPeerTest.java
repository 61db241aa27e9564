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
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine against a stand-in for a Django receiver behind django-idempotency-key 1.3.0
 * ({@link DjangoIdempotencyKeyPeer}): one test per behaviour of that receiver, each with what a
 * user configures for it (docs/http-contract.md, "Receivers in the wild").
 */
class DjangoIdempotencyKeyPeerTest {
  @TempDir Path dir;

  @Test
  void repeatsItAnswersWith409AreAckedAsAlreadyAppliedWhenClassifiedSo() throws Exception {
    long seed = Seeds.seed("django.seed", "django-peer");
    SplittableRandom random = new SplittableRandom(seed);
    try (DjangoIdempotencyKeyPeer peer = new DjangoIdempotencyKeyPeer(() -> {
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
      client.replay(client.transport(peer).classify(409, Kind.KEY_ALREADY_USED).build(), 100);
      assertThat(client.store.countByStatus().get(Status.ACKED)).as("seed %d", seed)
          .isEqualTo(200);
      assertThat(peer.totalEffects()).as("seed %d", seed).isEqualTo(200);
      List<OutboxRecord> recovered = accepted.stream()
          .filter(r -> client.reasons(r).contains(Reason.ALREADY_APPLIED)).toList();
      assertThat(recovered).as("lost answers, then a 409 on the resend (seed %d)", seed)
          .isNotEmpty();
      for (OutboxRecord r : recovered) {
        assertThat(client.reasons(r)).containsSubsequence(Reason.OUTCOME_UNKNOWN,
            Reason.ALREADY_APPLIED);
        assertThat(client.applied.get(r.commandId().toString())).as("acked without an answer")
            .isEqualTo(Optional.empty());
      }
      for (int e = 0; e < 10; e++) {
        assertThat(peer.arrivalOrder("entity-" + e)).as("seed %d", seed)
            .isEqualTo(LongStream.range(0, 20).boxed().toList());
      }
    }
  }

  @Test
  void withoutTheClassificationARepeatAfterALostAnswerEndsConflict() throws Exception {
    try (DjangoIdempotencyKeyPeer peer = new DjangoIdempotencyKeyPeer(() -> true);
        PeerClient client = new PeerClient(dir)) {
      OutboxRecord r = client.accept("a", 1);
      client.replay(client.transport(peer).build(), 5);
      assertThat(client.status(r)).as("the field failure this classification is for")
          .isEqualTo(Status.CONFLICT);
      assertThat(peer.effects(quoted(r))).isEqualTo(1);
    }
  }

  @Test
  void aKeyAlreadyUsedOnAFirstAttemptIsAConflictNeverAnAck() throws Exception {
    try (DjangoIdempotencyKeyPeer peer = new DjangoIdempotencyKeyPeer(() -> false);
        PeerClient client = new PeerClient(dir)) {
      OutboxRecord r = client.accept("a", 1);
      peer.alreadyUsed(quoted(r), "/note.put", r.payload().bytes());
      client.replay(client.transport(peer).classify(409, Kind.KEY_ALREADY_USED).build(), 5);
      assertThat(client.status(r)).isEqualTo(Status.CONFLICT);
      assertThat(client.reasons(r)).doesNotContain(Reason.ALREADY_APPLIED);
      assertThat(client.applied).isEmpty();
    }
  }

  @Test
  void itsLockTimeout423IsInProgressByDefaultAndRetriedWithTheSameKey() throws Exception {
    try (DjangoIdempotencyKeyPeer peer = new DjangoIdempotencyKeyPeer(() -> false);
        PeerClient client = new PeerClient(dir)) {
      OutboxRecord r = client.accept("a", 1);
      peer.lockedFor(quoted(r), 2);
      client.replay(client.transport(peer).build(), 10);
      assertThat(client.status(r)).isEqualTo(Status.ACKED);
      assertThat(client.reasons(r)).containsSubsequence(Reason.IN_PROGRESS, Reason.IN_PROGRESS,
          Reason.ACKED);
      assertThat(peer.effects(quoted(r))).isEqualTo(1);
    }
  }

  @Test
  void aFailedViewIsNotStoredSoTheRetryRunsItOnce() throws Exception {
    try (DjangoIdempotencyKeyPeer peer = new DjangoIdempotencyKeyPeer(() -> false);
        PeerClient client = new PeerClient(dir)) {
      OutboxRecord r = client.accept("a", 1);
      peer.failOnce(quoted(r));
      client.replay(client.transport(peer).build(), 10);
      assertThat(client.status(r)).isEqualTo(Status.ACKED);
      assertThat(client.reasons(r)).containsSubsequence(Reason.RETRYABLE_RESPONSE, Reason.ACKED);
      assertThat(peer.effects(quoted(r))).isEqualTo(1);
    }
  }

  @Test
  void itHashesTheHeaderAsReceivedSoEveryAttemptSendsTheSameBytesInEitherFormat()
      throws Exception {
    try (DjangoIdempotencyKeyPeer peer = new DjangoIdempotencyKeyPeer(() -> true);
        PeerClient client = new PeerClient(dir)) {
      OutboxRecord quotedOne = client.accept("a", 1);
      client.replay(client.transport(peer).classify(409, Kind.KEY_ALREADY_USED).build(), 5);
      OutboxRecord bareOne = client.accept("b", 1);
      client.replay(client.transport(peer).classify(409, Kind.KEY_ALREADY_USED)
          .keyHeaderFormat(KeyHeaderFormat.BARE).build(), 5);
      assertThat(client.status(quotedOne)).isEqualTo(Status.ACKED);
      assertThat(client.status(bareOne)).isEqualTo(Status.ACKED);
      assertThat(peer.keyHeaders()).as("a lost answer, then a resend: twice each")
          .containsExactly(quoted(quotedOne), quoted(quotedOne),
              bareOne.idempotencyKey().value(), bareOne.idempotencyKey().value());
      assertThat(peer.effects(quoted(quotedOne))).isEqualTo(1);
      assertThat(peer.effects(bareOne.idempotencyKey().value())).isEqualTo(1);
    }
  }

  private static String quoted(OutboxRecord r) {
    return "\"" + r.idempotencyKey() + "\"";
  }
}

package dev.outboxreplay.benchmarks;

import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.PassSummary;
import dev.outboxreplay.Replayer;
import dev.outboxreplay.Status;
import dev.outboxreplay.h2.H2Database;
import dev.outboxreplay.h2.H2OutboxStore;
import dev.outboxreplay.http.OkHttpTransport;
import dev.outboxreplay.server.IdempotentServer;
import dev.outboxreplay.server.NotesApplication;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;

/**
 * Replays {@code commands} queued commands (over {@code entities} entities, 100 by default) to the reference server on
 * loopback, next to a raw OkHttp POST loop of the same bodies and keys to a fresh reference
 * server at the same concurrency, with no client database. Same run; medians over rounds.
 */
final class ReplayBenchmark {
  private final int commands;
  private final int concurrency;
  private final int rounds;
  private final int entities;

  ReplayBenchmark(int commands, int concurrency, int rounds, int entities) {
    this.commands = commands;
    this.concurrency = concurrency;
    this.rounds = rounds;
    this.entities = entities;
  }

  void run() throws Exception {
    System.out.printf("replay benchmark: %d commands over %d entities, concurrency %d, "
        + "%d rounds, loopback%n", commands, entities, concurrency, rounds);
    double[] raw = new double[rounds];
    double[] replay = new double[rounds];
    rawPosts(); // warm-up round, not measured: both sides reach steady JIT state first
    replay();
    for (int round = 0; round < rounds; round++) {
      raw[round] = rawPosts();
      replay[round] = replay();
      System.out.printf("  round %d: raw OkHttp %.0f/s, replayer %.0f/s (%.2f)%n", round + 1,
          raw[round], replay[round], replay[round] / raw[round]);
    }
    double r = BenchSupport.median(raw);
    double p = BenchSupport.median(replay);
    System.out.printf("medians over %d rounds:%n", rounds);
    System.out.printf("raw OkHttp POST loop, no database : %7.0f commands/s (baseline)%n", r);
    System.out.printf("replayer from the H2 outbox       : %7.0f commands/s, ratio %.2f "
        + "(target >= 0.50)%n", p, p / r);
  }

  private double rawPosts() throws Exception {
    Path dir = Files.createTempDirectory("replay-bench");
    try (H2Database serverDb = H2Database.builder().file(dir.resolve("server"))
        .maxPoolSize(24).build()) {
      IdempotentServer server = server(serverDb);
      OkHttpClient client = BenchSupport.client(concurrency);
      try {
        return BenchSupport.postLoop(client, server.baseUrl() + "/note.put", concurrency,
            commands, n -> "raw-" + n,
            n -> "{\"body\":\"note\",\"entity\":\"e" + (n % entities) + "\",\"seq\":" + n + "}");
      } finally {
        server.close();
        client.dispatcher().executorService().shutdown();
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  private double replay() throws Exception {
    Path dir = Files.createTempDirectory("replay-bench");
    try (H2Database serverDb = H2Database.builder().file(dir.resolve("server"))
            .maxPoolSize(24).build();
        H2Database clientDb = H2Database.builder().file(dir.resolve("client"))
            .maxPoolSize(concurrency + 4).build()) {
      IdempotentServer server = server(serverDb);
      H2OutboxStore store = H2OutboxStore.create(clientDb);
      Outbox<Connection> outbox = Outbox.builder(store).build();
      List<OutboxCommand> batch = new ArrayList<>();
      for (int n = 0; n < commands; n++) {
        batch.add(OutboxCommand.of(NotesApplication.OPERATION, "e" + (n % entities),
            Map.of("entity", "e" + (n % entities), "seq", n, "body", "note")));
        if (batch.size() == 1_000) {
          outbox.acceptAll(batch);
          batch.clear();
        }
      }
      outbox.acceptAll(batch);
      OkHttpTransport transport = OkHttpTransport.builder(HttpUrl.get(server.baseUrl()))
          .client(BenchSupport.client(concurrency)).build();
      try (Replayer<Connection> replayer = Replayer.builder(store, transport)
          .concurrency(concurrency).batchSize(100).build()) {
        long start = System.nanoTime();
        while (store.countByStatus().get(Status.ACKED) < commands) {
          PassSummary pass = replayer.runPass();
          if (pass.idle()) {
            throw new IllegalStateException("replay stalled: " + store.countByStatus());
          }
        }
        return commands / ((System.nanoTime() - start) / 1e9);
      } finally {
        server.close();
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  private static IdempotentServer server(H2Database db) throws IOException {
    NotesApplication notes = new NotesApplication(db);
    return IdempotentServer.builder().database(db).threads(16)
        .handler(NotesApplication.OPERATION, notes.handler()).start();
  }


}

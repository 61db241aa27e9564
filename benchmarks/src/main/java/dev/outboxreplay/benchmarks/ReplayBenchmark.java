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
 * Replays {@code commands} queued commands (over {@code entities} entities, 100 by default) to
 * the reference server on loopback, next to a raw OkHttp POST loop of the same bodies and keys to
 * a fresh reference server at the same concurrency, with no client database. Same run; medians
 * over rounds, after two warm-up rounds of each.
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
    double[] rawCpu = new double[rounds];
    double[] replayCpu = new double[rounds];
    // Two warm-up rounds, not measured: the server's code keeps getting faster through the first.
    for (int warmUp = 0; warmUp < 2; warmUp++) {
      rawPosts();
      replay();
    }
    for (int round = 0; round < rounds; round++) {
      Measured r = rawPosts();
      Measured p = replay();
      raw[round] = r.perSecond();
      replay[round] = p.perSecond();
      rawCpu[round] = r.cpuMicrosPerCommand();
      replayCpu[round] = p.cpuMicrosPerCommand();
      System.out.printf("  round %d: raw OkHttp %.0f/s, replayer %.0f/s (%.2f); CPU per command "
          + "%.0f us vs %.0f us%n", round + 1, raw[round], replay[round],
          replay[round] / raw[round], rawCpu[round], replayCpu[round]);
    }
    double r = BenchSupport.median(raw);
    double p = BenchSupport.median(replay);
    System.out.printf("medians over %d rounds:%n", rounds);
    System.out.printf("raw OkHttp POST loop, no database : %7.0f commands/s (baseline), "
        + "%4.0f us CPU per command%n", r, BenchSupport.median(rawCpu));
    System.out.printf("replayer from the H2 outbox       : %7.0f commands/s, ratio %.2f "
        + "(target >= 0.50), %4.0f us CPU per command%n", p, p / r,
        BenchSupport.median(replayCpu));
    System.out.println("(CPU: this process, client and reference server together)");
  }

  /** A timed section: commands per second and this process's CPU time per command. */
  private record Measured(double perSecond, double cpuMicrosPerCommand) {}

  private Measured measure(long startNanos, long startCpuNanos) {
    long elapsed = System.nanoTime() - startNanos;
    long cpu = BenchSupport.processCpuNanos() - startCpuNanos;
    return new Measured(commands / (elapsed / 1e9), cpu / 1e3 / commands);
  }

  private Measured rawPosts() throws Exception {
    Path dir = Files.createTempDirectory("replay-bench");
    try (H2Database serverDb = H2Database.builder().file(dir.resolve("server"))
        .maxPoolSize(24).build()) {
      IdempotentServer server = server(serverDb);
      OkHttpClient client = BenchSupport.client(concurrency);
      try {
        long start = System.nanoTime();
        long cpu = BenchSupport.processCpuNanos();
        BenchSupport.postLoop(client, server.baseUrl() + "/note.put", concurrency, commands,
            n -> "raw-" + n,
            n -> "{\"body\":\"note\",\"entity\":\"e" + (n % entities) + "\",\"seq\":" + n + "}");
        return measure(start, cpu);
      } finally {
        server.close();
        client.dispatcher().executorService().shutdown();
      }
    } finally {
      BenchSupport.deleteTree(dir);
    }
  }

  private Measured replay() throws Exception {
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
        long cpu = BenchSupport.processCpuNanos();
        while (store.countByStatus().get(Status.ACKED) < commands) {
          PassSummary pass = replayer.runPass();
          if (pass.idle()) {
            throw new IllegalStateException("replay stalled: " + store.countByStatus());
          }
        }
        return measure(start, cpu);
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

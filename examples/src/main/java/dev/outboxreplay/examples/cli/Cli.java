package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.util.RawValue;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.Status;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;

/** Shared pieces of the {@code outbox} subcommands: exit codes and JSON output. */
final class Cli {
  static final int OK = 0;
  static final int BAD_INPUT = 2;
  static final int WORK_LEFT = 3;
  static final int UNREACHABLE = 4;
  /** {@code replay}: a command ended conflict or rejected during the run. */
  static final int ENDED_REFUSED = 5;
  /** {@code requeue}: refused because it would reorder the command's entity. */
  static final int WOULD_REORDER = 6;
  /** Reads stored payloads without turning any number into a double on the way. */
  static final ObjectMapper JSON = JsonMapper.builder()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .nodeFactory(JsonNodeFactory.withExactBigDecimals(true))
      .build();

  private Cli() {}

  /** Thrown to end a command with a message on stderr and an exit code; nothing was changed. */
  static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int exitCode;

    Failure(int exitCode, String message) {
      super(message);
      this.exitCode = exitCode;
    }
  }

  static Status status(String name) {
    try {
      return Status.fromWireName(name);
    } catch (IllegalArgumentException e) {
      throw new Failure(BAD_INPUT, e.getMessage());
    }
  }

  static ObjectNode json(OutboxRecord r) {
    ObjectNode node = JSON.createObjectNode()
        .put("commandId", r.commandId().toString())
        .put("idempotencyKey", r.idempotencyKey().value())
        .put("operation", r.operation())
        .put("entity", r.entityKey())
        .put("status", r.status().wireName())
        .put("attempt", r.attempt())
        .put("createdAt", r.createdAt().toString())
        .put("nextAttemptAt", r.nextAttemptAt().toString());
    if (r.firstSentAt() != null) {
      node.put("firstSentAt", r.firstSentAt().toString());
    }
    if (r.lastError() != null) {
      node.putObject("lastError").put("code", r.lastError().code())
          .put("message", r.lastError().message()).put("at", r.lastError().at().toString());
    }
    if (r.payload().retained()) {
      // the stored canonical bytes as they are: parsing them again could change a number
      node.putRawValue("payload", new RawValue(new String(r.payload().bytes(),
          StandardCharsets.UTF_8)));
    } else {
      // a tombstone: the history retention kept only the payload's hash
      node.putNull("payload").put("payloadSha256", r.payload().sha256Hex());
    }
    return node;
  }

  static ObjectNode counts(Map<Status, Long> counts) {
    ObjectNode node = JSON.createObjectNode();
    counts.forEach((status, n) -> node.put(status.wireName(), n));
    return node;
  }

  /** Runs {@code body}, turning {@link Failure} into its message and exit code. */
  static int run(CommandLine.Model.CommandSpec spec, java.util.concurrent.Callable<Integer> body)
      throws Exception {
    try {
      return body.call();
    } catch (Failure f) {
      return fail(spec, f.getMessage(), f.exitCode);
    } catch (OutboxStorageException e) {
      // a file that cannot be created, opened or read: one line, no stack trace
      return fail(spec, e.getMessage(), BAD_INPUT);
    }
  }

  /**
   * The first line of {@code file}, stripped: a secret (a token, a key) given with {@code option}
   * and kept off the command line. Warns on the command's error stream when other local users
   * may read the file. Exit code 2 when it is missing, unreadable or empty; no message quotes it.
   */
  static String readSecret(CommandLine.Model.CommandSpec spec, String option, Path file) {
    warnIfOthersCanRead(spec, option, file);
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line = in.readLine();
      if (line == null || line.isBlank()) {
        throw new Failure(BAD_INPUT, option + " " + file + " is empty");
      }
      return line.strip();
    } catch (IOException | UncheckedIOException e) {
      throw new Failure(BAD_INPUT, "cannot read " + option + " " + file + ": "
          + e.getClass().getSimpleName());
    }
  }

  /**
   * Prints a warning when {@code file}, which holds a secret given with {@code option}, can be
   * read by other local users (group or others may read it). Says nothing where the file system
   * has no POSIX permissions, or when they cannot be read (reading the file reports that).
   */
  static void warnIfOthersCanRead(CommandLine.Model.CommandSpec spec, String option, Path file) {
    Set<PosixFilePermission> permissions;
    try {
      permissions = Files.getPosixFilePermissions(file);
    } catch (UnsupportedOperationException | IOException e) {
      return;
    }
    if (permissions.contains(PosixFilePermission.GROUP_READ)
        || permissions.contains(PosixFilePermission.OTHERS_READ)) {
      PrintWriter err = spec.commandLine().getErr();
      err.println("warning: " + option + " " + file + " can be read by other local users ("
          + PosixFilePermissions.toString(permissions) + "); make it owner-only (chmod 600)");
      err.flush();
    }
  }

  private static int fail(CommandLine.Model.CommandSpec spec, String message, int exitCode) {
    PrintWriter err = spec.commandLine().getErr();
    err.println("outbox " + spec.name() + ": " + message);
    err.flush();
    return exitCode;
  }
}

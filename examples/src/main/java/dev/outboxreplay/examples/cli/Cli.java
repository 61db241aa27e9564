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
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Shared pieces of the {@code outbox} subcommands: exit codes and JSON output. */
final class Cli {
  static final int OK = 0;
  static final int BAD_INPUT = 2;
  static final int WORK_LEFT = 3;
  static final int UNREACHABLE = 4;
  /** {@code replay}: a command ended conflict or rejected during the run. */
  static final int ENDED_REFUSED = 5;
  /**
   * Refused, unless {@code --force}: {@code requeue} would reorder the command's entity,
   * {@code restore} would forget or resend what the receiver may have applied.
   */
  static final int REFUSED_UNLESS_FORCED = 6;
  /**
   * Standard output could not be written (a full disk, a closed pipe): what the command did to
   * the file is done, but its report is lost; the message on stderr says what was done.
   */
  static final int OUTPUT_FAILED = 7;
  /** Something the tool did not foresee: one line on stderr; please report it. */
  static final int INTERNAL_ERROR = 1;
  /**
   * Set when the JVM ran out of memory while a database was open. H2 may then have closed its
   * store in the middle of a write, and closing a connection of such a store can spin forever
   * (seen with H2 2.5.252 in {@code MVStore.registerVersionUsage}, from a rollback and from H2's
   * own shutdown hook). The tool then leaves the file as a killed process would (the next open
   * takes its lock over and finds the last commit) and halts once its report is printed.
   */
  static volatile boolean memoryExhausted;
  /** The longest duration an option takes: ten years. */
  static final Duration LONGEST_DURATION = Duration.ofDays(3650);
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");
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

  /**
   * Runs {@code body}, turning {@link Failure} into its message and exit code; then checks that
   * everything the command printed reached standard output ({@link #OUTPUT_FAILED} if not).
   */
  static int run(CommandLine.Model.CommandSpec spec, java.util.concurrent.Callable<Integer> body)
      throws Exception {
    int exit;
    try {
      exit = body.call();
    } catch (Failure f) {
      exit = fail(spec, f.getMessage(), f.exitCode);
    } catch (OutboxStorageException e) {
      // a file that cannot be created, opened or read: one line, no stack trace
      exit = fail(spec, e.getMessage() + (e.retryable()
          ? " (this passes: run the command again)" : ""), BAD_INPUT);
    }
    if (outputFailed(spec)) {
      return fail(spec, "cannot write to standard output (a full disk or a closed pipe?): "
          + "the output is incomplete", OUTPUT_FAILED);
    }
    return exit;
  }

  /**
   * True when something printed to standard output did not reach it. The tool's own output
   * writer reports write errors ({@link OutboxTool#commandLine}); a {@code PrintWriter} keeps
   * them to itself until asked.
   */
  static boolean outputFailed(CommandLine.Model.CommandSpec spec) {
    return spec.commandLine().getOut().checkError();
  }

  /**
   * The duration {@code text} gives, such as {@code 500ms}, {@code 60s}, {@code 2m}, {@code 1h}
   * or {@code 7d}; at most {@link #LONGEST_DURATION}.
   *
   * @throws IllegalArgumentException saying what is wrong, without a stack trace's worth of detail
   */
  static Duration duration(String text) {
    Matcher m = DURATION.matcher(text.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException("not a duration: '" + text
          + "' (use e.g. 500ms, 60s, 2m, 1h, 7d)");
    }
    Duration duration;
    try {
      long n = Long.parseLong(m.group(1));
      duration = switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    } catch (NumberFormatException | ArithmeticException tooLarge) {
      duration = null;
    }
    if (duration == null || duration.compareTo(LONGEST_DURATION) > 0) {
      throw new IllegalArgumentException("'" + text + "' is too long (at most "
          + LONGEST_DURATION.toDays() + "d)");
    }
    return duration;
  }

  /** Reads duration options ({@link #duration}); picocli reports a bad one as bad input. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return duration(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }

  /** Refuses a duration of zero for {@code option}. */
  static Duration positive(String option, Duration duration) {
    if (duration.isZero() || duration.isNegative()) {
      throw new Failure(BAD_INPUT, option + " must be longer than 0");
    }
    return duration;
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

  /**
   * Says on stderr that {@code opened} is a file whose creation never finished, which holds no
   * command; true when it is (the caller then reports an empty outbox).
   */
  static boolean unfinished(CommandLine.Model.CommandSpec spec,
      ExistingOutboxFile.Opened opened) {
    if (!opened.unfinished()) {
      return false;
    }
    PrintWriter err = spec.commandLine().getErr();
    err.println(spec.qualifiedName() + ": " + opened.file() + " was never finished "
        + "(the process creating it was stopped); it holds no command, and the next enqueue or "
        + "replay finishes it");
    err.flush();
    return true;
  }

  static int fail(CommandLine.Model.CommandSpec spec, String message, int exitCode) {
    PrintWriter err = spec.commandLine().getErr();
    err.println(spec.qualifiedName() + ": " + message);
    err.flush();
    return exitCode;
  }
}

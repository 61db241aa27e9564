package dev.outboxreplay.examples.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import dev.outboxreplay.CommandId;
import dev.outboxreplay.InvalidCommandException;
import dev.outboxreplay.Outbox;
import dev.outboxreplay.OutboxCommand;
import dev.outboxreplay.OutboxRecord;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code outbox enqueue}: accepts one command, or a JSON-lines file of them atomically. */
@Command(name = "enqueue", mixinStandardHelpOptions = true,
    description = "Accept commands into an outbox file; prints one JSON line per command.")
final class EnqueueCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--db", required = true,
      description = "Outbox database: the file (NAME.mv.db, NAME.sqlite) or its base path NAME; "
          + "created if missing.")
  Path db;

  @Option(names = "--wait", defaultValue = "10s", description = ExistingOutboxFile.WAIT_DESCRIPTION,
      converter = Cli.DurationConverter.class)
  Duration wait;

  @Option(names = "--key-file", paramLabel = "FILE",
      description = ExistingOutboxFile.KEY_FILE_DESCRIPTION + " A new file is created encrypted.")
  Path keyFile;

  @Option(names = "--operation", description = "Operation, e.g. note.put.")
  String operation;

  @Option(names = "--entity", description = "Entity key (ordering group).")
  String entity;

  @Option(names = "--payload", description = "JSON payload.")
  String payload;

  @Option(names = "--from",
      description = "JSON lines: {\"operation\":..., \"entity\":..., \"payload\":{...}}")
  Path from;

  @Option(names = "--engine", defaultValue = "h2", paramLabel = "h2|sqlite",
      description = "The engine of a new file (default ${DEFAULT-VALUE}); an existing file is "
          + "opened with its own.")
  String engine;

  private static final Pattern INDEXED_FIELD = Pattern.compile("commands\\[(\\d+)\\]\\.(.+)");
  /** The line of each command read from {@code --from}. */
  private final List<Integer> lineNumbers = new ArrayList<>();

  @Option(names = "--accept-valid-prefix", description = "With --from: on a bad line, still "
      + "accept the lines before it (default: accept nothing).")
  boolean acceptValidPrefix;

  @Override
  public Integer call() throws Exception {
    return Cli.run(spec, () -> {
      lineNumbers.clear();
      List<OutboxCommand> commands;
      try {
        commands = from != null ? readLines() : List.of(single());
        // everything is checked, and every command has its id, before the file is opened or
        // created: a refused enqueue touches no file, and a retry after an unknown outcome finds
        // the rows a failed try committed instead of queueing them twice
        commands = withIds(checked(commands));
      } catch (OutOfMemoryError e) {
        lineNumbers.clear();
        throw new Cli.Failure(Cli.BAD_INPUT, (from != null ? from + " (" + Files.size(from)
            + " bytes)" : "the command") + " does not fit in this JVM's memory (" + maxHeap()
            + "); nothing was accepted: split it into smaller files, or give the JVM more "
            + "memory (for example JAVA_TOOL_OPTIONS=-Xmx512m)");
      }
      char[] key = ExistingOutboxFile.readKey(spec, keyFile);
      try {
        return enqueue(commands, key);
      } finally {
        ExistingOutboxFile.wipe(key);
      }
    });
  }

  /**
   * Accepts into the file, creating it if missing, or into an existing one only if it already
   * holds an outbox. A failure is retried while it passes (another process handing the file
   * over); after the last one, the report says whether the batch is stored.
   */
  private int enqueue(List<OutboxCommand> commands, char[] key) {
    try (ExistingOutboxFile.Opened opened = ExistingOutboxFile.createOrOpen(db,
        OutboxEngine.named(engine), wait, key)) {
      Outbox<Connection> outbox = Outbox.builder(opened.store()).build();
      List<OutboxRecord> accepted = new BatchAccept(outbox, db.toString(),
          spec.commandLine().getErr()).accept(commands);
      PrintWriter out = spec.commandLine().getOut();
      for (OutboxRecord r : accepted) {
        out.println(Cli.JSON.createObjectNode().put("commandId", r.commandId().toString())
            .put("idempotencyKey", r.idempotencyKey().value()).put("operation", r.operation())
            .put("entity", r.entityKey()));
      }
      out.flush();
      if (Cli.outputFailed(spec)) {
        throw new Cli.Failure(Cli.OUTPUT_FAILED, "cannot write to standard output; the "
            + accepted.size() + " command(s) ARE accepted (ids " + BatchAccept.range(commands)
            + "): "
            + "`outbox list --db " + db + " --status queued` shows them");
      }
      return Cli.OK;
    }
  }

  /** The JVM's heap limit, for messages. */
  static String maxHeap() {
    long max = Runtime.getRuntime().maxMemory();
    return max == Long.MAX_VALUE ? "no heap limit" : "max heap " + (max >> 20) + " MiB";
  }

  private static List<OutboxCommand> withIds(List<OutboxCommand> commands) {
    List<OutboxCommand> withIds = new ArrayList<>(commands.size());
    for (OutboxCommand c : commands) {
      withIds.add(c.withCommandId(CommandId.generate()));
    }
    return withIds;
  }

  /**
   * The commands that pass the accept's own checks: all of them, or with
   * {@code --accept-valid-prefix} those before the first refused one; a refusal is reported by
   * its line.
   */
  private List<OutboxCommand> checked(List<OutboxCommand> commands) {
    try {
      Outbox.checkWithDefaults(commands);
      return commands;
    } catch (InvalidCommandException e) {
      Matcher m = INDEXED_FIELD.matcher(e.field());
      if (from == null || !m.matches()) {
        throw new Cli.Failure(Cli.BAD_INPUT, e.getMessage() + "; nothing was accepted");
      }
      int index = Integer.parseInt(m.group(1));
      String problem = from + " line " + lineNumbers.get(index) + " field \"" + m.group(2)
          + "\"" + e.getMessage().substring(e.field().length());
      if (!acceptValidPrefix || index == 0) {
        throw new Cli.Failure(Cli.BAD_INPUT, problem + "; nothing was accepted");
      }
      spec.commandLine().getErr().println("outbox enqueue: " + problem + "; accepting the "
          + index + " line(s) before it");
      spec.commandLine().getErr().flush();
      return commands.subList(0, index);
    }
  }

  private OutboxCommand single() {
    if (operation == null || entity == null || payload == null) {
      throw new Cli.Failure(Cli.BAD_INPUT,
          "give --operation, --entity and --payload, or --from FILE.jsonl");
    }
    return OutboxCommand.ofJson(operation, entity, payload);
  }

  private List<OutboxCommand> readLines() throws IOException {
    if (Files.isDirectory(from)) {
      throw new Cli.Failure(Cli.BAD_INPUT, from + " is a directory, not a JSON-lines file");
    }
    if (!Files.isReadable(from)) {
      throw new Cli.Failure(Cli.BAD_INPUT, "cannot read " + from);
    }
    List<OutboxCommand> commands = new ArrayList<>();
    List<String> lines = lines(Files.readAllBytes(from));
    for (int i = 0; i < lines.size(); i++) {
      int lineNumber = i + 1;
      String line = lines.get(i);
      if (line.isBlank()) {
        continue;
      }
      String problem = null;
      OutboxCommand command = null;
      try {
        command = CommandJsonLine.parse(line);
      } catch (IllegalArgumentException e) {
        problem = e.getMessage();
      }
      if (problem != null) {
        if (acceptValidPrefix && !commands.isEmpty()) {
          spec.commandLine().getErr().println("outbox enqueue: " + from + " line "
              + lineNumber + " " + problem + "; accepting the " + commands.size()
              + " line(s) before it");
          spec.commandLine().getErr().flush();
          return commands;
        }
        throw new Cli.Failure(Cli.BAD_INPUT, from + " line " + lineNumber + " " + problem
            + "; nothing was accepted");
      }
      commands.add(command);
      lineNumbers.add(lineNumber);
    }
    if (commands.isEmpty()) {
      throw new Cli.Failure(Cli.BAD_INPUT, from + " holds no commands");
    }
    return commands;
  }

  /** The file's lines, each decoded strictly: bytes that are not UTF-8 are named by line. */
  private List<String> lines(byte[] bytes) {
    List<String> lines = new ArrayList<>();
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i == bytes.length || bytes[i] == '\n') {
        if (i > start || i < bytes.length) {
          int end = i > start && bytes[i - 1] == '\r' ? i - 1 : i;
          try {
            lines.add(StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes, start, end - start)).toString());
          } catch (CharacterCodingException e) {
            throw new Cli.Failure(Cli.BAD_INPUT, from + " line " + (lines.size() + 1)
                + " is not valid UTF-8; nothing was accepted");
          }
        }
        start = i + 1;
      }
    }
    return lines;
  }

  /**
   * One line of a {@code --from} file: {@code {"operation": ..., "entity": ..., "payload": ...}}.
   * The line is read strictly (no duplicate key, no trailing content, no other field), and the
   * payload's own text is handed to {@link OutboxCommand#ofJson}, the path {@code --payload}
   * takes: the same JSON gives the same stored bytes, or the same refusal, either way.
   */
  static final class CommandJsonLine {
    private static final JsonFactory STRICT = JsonFactory.builder()
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private CommandJsonLine() {}

    /** @throws IllegalArgumentException saying what is wrong, naming the field */
    static OutboxCommand parse(String line) {
      String operation = null;
      String entity = null;
      String payload = null;
      try (JsonParser p = STRICT.createParser(line)) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          throw new IllegalArgumentException("is not a JSON object");
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          JsonToken value = p.nextToken();
          switch (name) {
            case "operation", "entity" -> {
              if (value != JsonToken.VALUE_STRING) {
                throw new IllegalArgumentException("field \"" + name + "\" must be a string");
              }
              if (name.equals("operation")) {
                operation = p.getText();
              } else {
                entity = p.getText();
              }
            }
            case "payload" -> {
              int start = (int) p.currentTokenLocation().getCharOffset();
              p.skipChildren();
              // a string's text is read lazily: without this the end is right after its quote
              p.finishToken();
              int end = (int) p.currentLocation().getCharOffset();
              payload = line.substring(start, end);
            }
            default -> throw new IllegalArgumentException("has an unknown field \"" + name
                + "\" (expected operation, entity, payload)");
          }
        }
        if (trailing(p)) {
          throw new IllegalArgumentException("has content after the JSON object");
        }
      } catch (JsonParseException e) {
        throw new IllegalArgumentException("is not valid JSON: " + e.getOriginalMessage());
      } catch (IOException e) {
        throw new IllegalArgumentException("cannot be read: " + e.getMessage());
      }
      if (operation == null || entity == null || payload == null) {
        throw new IllegalArgumentException("needs \"operation\" and \"entity\" strings and a "
            + "\"payload\"");
      }
      return OutboxCommand.ofJson(operation, entity, payload);
    }

    private static boolean trailing(JsonParser p) throws IOException {
      try {
        return p.nextToken() != null;
      } catch (JsonParseException garbage) {
        return true;
      }
    }
  }
}

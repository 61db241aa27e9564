package dev.outboxreplay;

/**
 * A command was refused at the API edge before anything was written: a blank or over-long field,
 * a payload that cannot be serialized to JSON, or a payload over the size limit. The message names
 * the field.
 */
public final class InvalidCommandException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final String field;

  public InvalidCommandException(String field, String problem) {
    super(field + ": " + problem);
    this.field = field;
  }

  public InvalidCommandException(String field, String problem, Throwable cause) {
    super(field + ": " + problem, cause);
    this.field = field;
  }

  /** The name of the offending field, e.g. {@code payload} or {@code entityKey}. */
  public String field() {
    return field;
  }
}

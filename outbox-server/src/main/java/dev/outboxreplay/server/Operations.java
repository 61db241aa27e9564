package dev.outboxreplay.server;

/** The check an operation's name passes when a receiver registers its handler. */
final class Operations {
  private Operations() {}

  /**
   * {@code operation}, one non-blank path segment.
   *
   * @throws IllegalArgumentException when it is null, blank or holds a '/'
   */
  static String requireName(String operation) {
    if (operation == null || operation.isBlank() || operation.contains("/")) {
      throw new IllegalArgumentException("operation must be non-blank without '/': "
          + operation);
    }
    return operation;
  }
}

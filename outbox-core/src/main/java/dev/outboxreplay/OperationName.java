package dev.outboxreplay;

import java.util.regex.Pattern;

/**
 * The grammar of an operation name: one URL path segment that needs no escaping. It starts with
 * an ASCII letter or digit and goes on with ASCII letters, digits and {@code . _ ~ -} (RFC 3986
 * unreserved characters), at most {@value #MAX_LENGTH} characters. So {@code .} and {@code ..},
 * which a URL resolves to the base path or its parent, are not operation names, nor is anything
 * with a {@code /}, a space or a {@code %}. Examples: {@code note.put}, {@code v2_orders-create}.
 */
public final class OperationName {
  public static final int MAX_LENGTH = 200;
  /** The grammar, for messages. */
  public static final String GRAMMAR = "one URL path segment: an ASCII letter or digit, then "
      + "ASCII letters, digits, '.', '_', '~' or '-', at most " + MAX_LENGTH + " characters";
  private static final Pattern VALID =
      Pattern.compile("[A-Za-z0-9][A-Za-z0-9._~-]{0," + (MAX_LENGTH - 1) + "}");

  private OperationName() {}

  /** True when {@code name} follows the grammar. */
  public static boolean isValid(String name) {
    return name != null && VALID.matcher(name).matches();
  }
}

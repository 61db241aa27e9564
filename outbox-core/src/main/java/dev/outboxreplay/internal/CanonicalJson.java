package dev.outboxreplay.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Map;
import org.erdtman.jcs.JsonCanonicalizer;
import org.erdtman.jcs.NumberToJSON;

/**
 * Turns a payload into canonical JSON bytes per RFC 8785 (JSON Canonicalization Scheme, JCS):
 * object keys sorted by UTF-16 code units, no insignificant whitespace, strings escaped as JCS
 * says, numbers written as ECMAScript writes the IEEE 754 double they denote ({@code 1e21}
 * becomes {@code 1e+21}, {@code 1.50} becomes {@code 1.5}). A receiver in any language with a
 * JCS library gets the same bytes, and so the same SHA-256.
 *
 * <p>JCS, like I-JSON (RFC 7493), reads every number as a double. A number that would change
 * value on the way is refused, naming where it is ({@code $.order.total}), never changed:
 * <ul>
 *   <li>outside the double range, or so small it would become 0 ({@code 1e400}, {@code 1e-400});
 *   <li>an integer written without fraction or exponent that a double does not hold exactly
 *       ({@code 9007199254740993}, a 64-bit id; send it as a string);
 *   <li>any other number with more than {@value #DOUBLE_DIGITS} significant digits that its
 *       double does not keep ({@code 0.1000000000000000000000000001}).
 * </ul>
 * Any other number of at most {@value #DOUBLE_DIGITS} significant digits is the nearest double, as
 * I-JSON reads it: {@code 333333333.33333329} becomes {@code 333333333.3333333}, RFC 8785's own
 * example. Text must also be one JSON value without duplicate keys or trailing content.
 *
 * <p>Thread-safe.
 */
public final class CanonicalJson {
  private static final JsonMapper MAPPER = JsonMapper.builder()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .build();
  /** Significant digits that always suffice to write a double (17). */
  static final int DOUBLE_DIGITS = 17;

  private CanonicalJson() {}

  /**
   * Canonical bytes of a Jackson-serializable value.
   *
   * @throws IllegalArgumentException when Jackson cannot serialize it, or it holds NaN/infinity
   */
  public static byte[] fromValue(Object value) {
    JsonNode tree;
    try {
      tree = MAPPER.valueToTree(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("cannot be serialized to JSON by Jackson: "
          + rootMessage(e), e);
    }
    return write(tree == null ? NullNode.getInstance() : tree);
  }

  /**
   * Canonical bytes of JSON text.
   *
   * @throws IllegalArgumentException when the text is not one well-formed JSON value or has
   *     duplicate object keys
   */
  public static byte[] fromText(String json) {
    JsonNode tree;
    try {
      tree = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("is not valid JSON: " + e.getOriginalMessage(), e);
    }
    if (tree == null || tree.isMissingNode()) {
      throw new IllegalArgumentException("is not valid JSON: no value");
    }
    return write(tree);
  }

  /** Checks every number, then lets the RFC 8785 reference implementation write the bytes. */
  private static byte[] write(JsonNode node) {
    checkNumbers(node, new ArrayDeque<>());
    try {
      // the reference implementation takes only an object at the top: wrap any value in one
      String wrapped = new JsonCanonicalizer("{\"\":" + MAPPER.writeValueAsString(node) + "}")
          .getEncodedString();
      return wrapped.substring("{\"\":".length(), wrapped.length() - 1)
          .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot be written as JSON: " + e.getMessage(), e);
    }
  }

  /**
   * Checks every number under {@code node}. {@code path} holds the keys (strings) and indexes
   * (integers) down to it; it is turned into text only for a refusal, so a payload that passes
   * costs no path strings.
   */
  private static void checkNumbers(JsonNode node, Deque<Object> path) {
    if (node.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> field = it.next();
        path.addLast(field.getKey());
        checkNumbers(field.getValue(), path);
        path.removeLast();
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        path.addLast(i);
        checkNumbers(node.get(i), path);
        path.removeLast();
      }
    } else if (node.isNumber()) {
      checkNumber(node, path);
    }
  }

  private static void checkNumber(JsonNode node, Deque<Object> path) {
    if (node.isFloatingPointNumber() && !node.isBigDecimal()) {
      double d = node.doubleValue(); // a Java double or float: any finite one is exact
      if (!Double.isFinite(d)) {
        throw new IllegalArgumentException("holds " + d + " at " + text(path)
            + ", which JSON cannot represent");
      }
      return;
    }
    BigDecimal value = node.isIntegralNumber()
        ? new BigDecimal(node.bigIntegerValue()) : node.decimalValue();
    if (value.precision() - value.scale() > 400 || value.scale() - value.precision() > 400) {
      throw refused(value, path, "is outside the range of a double");
    }
    double d = value.doubleValue();
    if (!Double.isFinite(d) || (d == 0 && value.signum() != 0)) {
      throw refused(value, path, "is outside the range of a double");
    }
    String shortest = es6(d);
    if (new BigDecimal(shortest).compareTo(value) == 0) {
      return;
    }
    if (node.isIntegralNumber()) { // written without fraction or exponent: meant exactly
      throw refused(value, path, "is an integer a double does not hold exactly (it would become "
          + shortest + "); send it as a string");
    }
    if (value.stripTrailingZeros().precision() > DOUBLE_DIGITS) {
      throw refused(value, path, "has more significant digits than a double keeps (it would "
          + "become " + shortest + "); send it as a string");
    }
  }

  /** {@code $.order.lines[2].total}: the path as a refusal names it. */
  private static String text(Deque<Object> path) {
    StringBuilder text = new StringBuilder("$");
    for (Object segment : path) {
      if (segment instanceof Integer index) {
        text.append('[').append(index).append(']');
      } else {
        text.append('.').append(segment);
      }
    }
    return text.toString();
  }

  /** How ECMAScript (and so RFC 8785) writes {@code d}; {@code d} is finite. */
  private static String es6(double d) {
    try {
      return NumberToJSON.serializeNumber(d);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot write " + d + " as RFC 8785 does", e);
    }
  }

  private static IllegalArgumentException refused(BigDecimal value, Deque<Object> path,
      String why) {
    String shown = value.toString();
    if (shown.length() > 40) {
      shown = shown.substring(0, 37) + "...";
    }
    return new IllegalArgumentException("holds the number " + shown + " at " + text(path)
        + ", which " + why + " (RFC 8785 and I-JSON read numbers as IEEE 754 doubles)");
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage();
  }
}

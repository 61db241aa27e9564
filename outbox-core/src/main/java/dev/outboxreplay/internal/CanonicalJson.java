package dev.outboxreplay.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

/**
 * Turns a payload into canonical JSON bytes: object keys sorted by UTF-16 code units, no
 * insignificant whitespace, each number in one form. Two logically equal payloads give equal
 * bytes. NaN and infinities are refused because JSON has no such numbers.
 *
 * <p>Numbers: an integral value of at most {@value #MAX_PLAIN_DIGITS} digits is written as a
 * plain integer ({@code 2.0} and {@code 2e0} become {@code 2}); any other value is written as
 * {@link BigDecimal#toString()} of its value with trailing zeros stripped ({@code 1.50} becomes
 * {@code 1.5}, {@code 1e400} stays {@code 1E+400}). The output is never much longer than the
 * input: a few bytes such as {@code 1e99999999} must not expand into a hundred million digits.
 *
 * <p>Thread-safe.
 */
public final class CanonicalJson {
  private static final JsonMapper MAPPER = JsonMapper.builder()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .build();
  private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);
  /** Longest integer written in plain digits; longer ones keep an exponent. */
  static final int MAX_PLAIN_DIGITS = 100;

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
    return write(canonical(tree == null ? NODES.nullNode() : tree));
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
    return write(canonical(tree));
  }

  private static byte[] write(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("cannot be written as JSON: " + e.getOriginalMessage(), e);
    }
  }

  private static JsonNode canonical(JsonNode node) {
    if (node.isObject()) {
      List<String> names = new ArrayList<>();
      node.fieldNames().forEachRemaining(names::add);
      Collections.sort(names);
      ObjectNode sorted = NODES.objectNode();
      for (String name : names) {
        sorted.set(name, canonical(node.get(name)));
      }
      return sorted;
    }
    if (node.isArray()) {
      ArrayNode array = NODES.arrayNode(node.size());
      for (Iterator<JsonNode> it = node.elements(); it.hasNext(); ) {
        array.add(canonical(it.next()));
      }
      return array;
    }
    if (node.isNumber()) {
      return canonicalNumber(node);
    }
    return node;
  }

  private static JsonNode canonicalNumber(JsonNode node) {
    BigDecimal value;
    if (node.isIntegralNumber()) {
      value = new BigDecimal(node.bigIntegerValue());
    } else if (node.isBigDecimal()) {
      value = node.decimalValue();
    } else if (Double.isFinite(node.doubleValue())) {
      value = new BigDecimal(Double.toString(node.doubleValue()));
    } else {
      throw new IllegalArgumentException("holds " + node.doubleValue()
          + ", which JSON cannot represent");
    }
    BigDecimal stripped = value.signum() == 0 ? BigDecimal.ZERO : value.stripTrailingZeros();
    boolean plainInteger = stripped.scale() <= 0
        && stripped.precision() - stripped.scale() <= MAX_PLAIN_DIGITS;
    return plainInteger
        ? NODES.numberNode(stripped.toBigIntegerExact()) : NODES.numberNode(stripped);
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage();
  }
}

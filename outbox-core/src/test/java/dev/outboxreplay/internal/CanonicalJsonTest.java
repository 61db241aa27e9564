package dev.outboxreplay.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CanonicalJsonTest {
  record Note(String title, int version, List<String> tags) {}

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  @Test
  void objectKeysAreSortedAtEveryDepthWithoutWhitespace() {
    Map<String, Object> inner = new LinkedHashMap<>();
    inner.put("z", 1);
    inner.put("a", 2);
    Map<String, Object> outer = new LinkedHashMap<>();
    outer.put("b", inner);
    outer.put("a", List.of(inner));
    assertThat(text(CanonicalJson.fromValue(outer)))
        .isEqualTo("{\"a\":[{\"a\":2,\"z\":1}],\"b\":{\"a\":2,\"z\":1}}");
  }

  @Test
  void logicallyEqualPayloadsGiveEqualBytes() {
    byte[] fromRecord = CanonicalJson.fromValue(new Note("t", 2, List.of("x")));
    byte[] fromText = CanonicalJson.fromText(
        "{ \"version\" : 2.0, \"tags\":[\"x\"],\n \"title\":\"t\" }");
    byte[] fromMap = CanonicalJson.fromValue(
        Map.of("tags", List.of("x"), "title", "t", "version", new BigDecimal("2.000")));
    assertThat(text(fromRecord)).isEqualTo("{\"tags\":[\"x\"],\"title\":\"t\",\"version\":2}");
    assertThat(fromText).isEqualTo(fromRecord);
    assertThat(fromMap).isEqualTo(fromRecord);
  }

  @Test
  void numbersHaveOneForm() {
    assertThat(text(CanonicalJson.fromText("[1.50, 1e2, -0.0, 0.1, 12345678901234567890]")))
        .isEqualTo("[1.5,100,0,0.1,12345678901234567890]");
    assertThat(text(CanonicalJson.fromValue(List.of(0.1d, 1.0f, 3L))))
        .isEqualTo("[0.1,1,3]");
  }

  @Test
  void hugeExponentsStayShortInsteadOfExpandingIntoDigits() {
    byte[] canonical = CanonicalJson.fromText("[1e99999999, 1e100, 1e99, -2.5E-400, 0.0000001]");
    assertThat(text(canonical))
        .isEqualTo("[1E+99999999,1E+100," + "1" + "0".repeat(99) + ",-2.5E-400,1E-7]");
    String hundredAndOneDigits = "1" + "0".repeat(100);
    assertThat(CanonicalJson.fromText(hundredAndOneDigits))
        .isEqualTo(CanonicalJson.fromText("1e100"));
  }

  @Test
  void nonFiniteNumbersAreRefused() {
    assertThatThrownBy(() -> CanonicalJson.fromValue(Map.of("x", Double.NaN)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NaN");
  }

  @Test
  void malformedOrDuplicateKeyTextIsRefused() {
    assertThatThrownBy(() -> CanonicalJson.fromText("{\"a\":1,\"a\":2}"))
        .hasMessageContaining("Duplicate field 'a'");
    assertThatThrownBy(() -> CanonicalJson.fromText("{\"a\":1} trailing"))
        .hasMessageContaining("not valid JSON");
    assertThatThrownBy(() -> CanonicalJson.fromText("")).hasMessageContaining("no value");
  }

  @Test
  void unserializableValuesAreRefusedWithJacksonsReason() {
    assertThatThrownBy(() -> CanonicalJson.fromValue(new Object()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot be serialized to JSON");
  }
}

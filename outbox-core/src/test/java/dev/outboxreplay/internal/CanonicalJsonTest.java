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
  void numbersHaveOneFormTheOneEcmaScriptWritesForTheirDouble() {
    assertThat(text(CanonicalJson.fromText(
        "[1.50, 1e2, -0.0, 0.1, 1e21, 1e-7, 123456789012345680000, 9007199254740992]")))
        .isEqualTo("[1.5,100,0,0.1,1e+21,1e-7,123456789012345680000,9007199254740992]");
    assertThat(text(CanonicalJson.fromValue(List.of(0.1d, 1.0f, 3L, 1e21d))))
        .isEqualTo("[0.1,1,3,1e+21]");
  }

  /** RFC 8785, section 3.2.3: the sample input and its canonical form, byte for byte. */
  @Test
  void rfc8785SampleGivesTheRfcsBytes() {
    String input = """
        {
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",
          "literals": [null, true, false]
        }""";
    String expected = "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,"
        + "1e+30,4.5,0.002,1e-27],\"string\":\"\u20ac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
    assertThat(text(CanonicalJson.fromText(input))).isEqualTo(expected);
  }

  /** RFC 8785, appendix B: number serialization samples (given there as IEEE 754 bit patterns). */
  @Test
  void rfc8785NumberSamples() {
    String[][] samples = {
        {"4340000000000001", "9007199254740994"},
        {"4340000000000002", "9007199254740996"},
        {"444b1ae4d6e2ef50", "1e+21"},
        {"3eb0c6f7a0b5ed8d", "0.000001"},
        {"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
        {"7fefffffffffffff", "1.7976931348623157e+308"},
        {"0000000000000001", "5e-324"},
        {"44b52d02c7e14af6", "1e+23"},
        {"c3e0000000000000", "-9223372036854776000"},
    };
    for (String[] sample : samples) {
      double d = Double.longBitsToDouble(Long.parseUnsignedLong(sample[0], 16));
      assertThat(text(CanonicalJson.fromValue(d))).as(sample[0]).isEqualTo(sample[1]);
      assertThat(text(CanonicalJson.fromText(sample[1]))).as(sample[1]).isEqualTo(sample[1]);
    }
  }

  @Test
  void numbersThatWouldChangeValueAreRefusedNamingWhere() {
    for (String[] bad : new String[][] {
        {"{\"a\":{\"big\":1e400}}", "$.a.big"},
        {"[1, 1e-400]", "$[1]"},
        {"{\"id\":9007199254740993}", "$.id"},
        {"{\"n\":12345678901234567890}", "$.n"},
        {"{\"fine\":0.1000000000000000000000000001}", "$.fine"},
        {"1e99999999", "$"},
    }) {
      assertThatThrownBy(() -> CanonicalJson.fromText(bad[0])).as(bad[0])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(" at " + bad[1] + ", which ")
          .hasMessageContaining("double");
    }
    assertThatThrownBy(() -> CanonicalJson.fromValue(Map.of("id", 9007199254740993L)))
        .hasMessageContaining("$.id").hasMessageContaining("send it as a string");
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

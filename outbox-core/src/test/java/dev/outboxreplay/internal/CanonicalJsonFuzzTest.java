package dev.outboxreplay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.DeserializationFeature;
import java.nio.charset.StandardCharsets;

/**
 * Canonicalization is a fixed point and preserves meaning: for any text it accepts, canonical
 * bytes re-canonicalize to themselves and parse to a tree equal to the input's (numbers compared
 * as the doubles RFC 8785 reads them as). Inputs it refuses must be refused with IllegalArgumentException, nothing else.
 */
class CanonicalJsonFuzzTest {
  private static final ObjectMapper PLAIN = new ObjectMapper()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  @FuzzTest(maxDuration = "60s")
  void canonicalFormIsAFixedPointThatKeepsMeaning(FuzzedDataProvider data) throws Exception {
    String text = data.consumeRemainingAsString();
    byte[] canonical;
    try {
      canonical = CanonicalJson.fromText(text);
    } catch (IllegalArgumentException refused) {
      return;
    }
    String canonicalText = new String(canonical, StandardCharsets.UTF_8);
    assertThat(CanonicalJson.fromText(canonicalText)).isEqualTo(canonical);
    assertThat(canonicalText).doesNotContain("\n");
    JsonNode original = PLAIN.readTree(text);
    JsonNode roundTripped = PLAIN.readTree(canonicalText);
    assertThat(sameMeaning(original, roundTripped)).as("%s vs %s", text, canonicalText).isTrue();
  }

  private static boolean sameMeaning(JsonNode a, JsonNode b) {
    if (a.isNumber() && b.isNumber()) {
      // RFC 8785 / I-JSON meaning: the same double (0 and -0 are one number to JCS)
      return a.doubleValue() == b.doubleValue();
    }
    if (a.isObject() && b.isObject()) {
      if (a.size() != b.size()) {
        return false;
      }
      for (var it = a.fieldNames(); it.hasNext(); ) {
        String name = it.next();
        if (!b.has(name) || !sameMeaning(a.get(name), b.get(name))) {
          return false;
        }
      }
      return true;
    }
    if (a.isArray() && b.isArray()) {
      if (a.size() != b.size()) {
        return false;
      }
      for (int i = 0; i < a.size(); i++) {
        if (!sameMeaning(a.get(i), b.get(i))) {
          return false;
        }
      }
      return true;
    }
    return a.equals(b);
  }
}

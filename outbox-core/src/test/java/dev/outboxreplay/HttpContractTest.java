package dev.outboxreplay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Test;

class HttpContractTest {
  @Test
  void structuredStringsQuoteAndEscape() {
    assertThat(HttpContract.toStructuredString("note.put:n-1:abc"))
        .isEqualTo("\"note.put:n-1:abc\"");
    assertThat(HttpContract.toStructuredString("a\"b\\c")).isEqualTo("\"a\\\"b\\\\c\"");
    assertThat(HttpContract.parseStructuredString(" \"a\\\"b\\\\c\" ")).isEqualTo("a\"b\\c");
  }

  @Test
  void malformedStructuredStringsAreRefusedWithTheReason() {
    assertThatThrownBy(() -> HttpContract.parseStructuredString("abc"))
        .hasMessageContaining("double quotes");
    assertThatThrownBy(() -> HttpContract.parseStructuredString("\"abc"))
        .hasMessageContaining("no closing quote");
    assertThatThrownBy(() -> HttpContract.parseStructuredString("\"a\"b\""))
        .hasMessageContaining("after the closing quote");
    assertThatThrownBy(() -> HttpContract.parseStructuredString("\"a\\nb\""))
        .hasMessageContaining("bad escape");
    assertThatThrownBy(() -> HttpContract.parseStructuredString("\"caf\u00e9\""))
        .hasMessageContaining("U+00E9");
  }

  @Test
  void contentDigestIsRfc9530Sha256() {
    assertThat(HttpContract.contentDigest(
        "{\"hello\": \"world\"}\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
        .isEqualTo("sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:");
  }

  @FuzzTest(maxDuration = "30s")
  void everyPrintableAsciiKeyRoundTrips(FuzzedDataProvider data) {
    String key = data.consumeAsciiString(300).chars()
        .map(c -> 0x20 + Math.floorMod(c, 0x5f))
        .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
        .toString();
    assertThat(HttpContract.parseStructuredString(HttpContract.toStructuredString(key)))
        .isEqualTo(key);
  }
}

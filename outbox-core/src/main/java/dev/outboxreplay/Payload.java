package dev.outboxreplay;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * The canonical JSON bytes of a command (RFC 8785, JSON Canonicalization Scheme) and their
 * SHA-256. Stored once at accept and sent byte-identical on every attempt; a receiver that
 * canonicalizes the body with any JCS library gets the same bytes and hash. At accept, a number a
 * double would change ({@code 1e400}, {@code 9007199254740993}) is refused, naming where it is.
 * Immutable: the bytes are copied in and copied out.
 */
public final class Payload {
  private final byte[] bytes;
  private final byte[] sha256;

  private Payload(byte[] bytes, byte[] sha256) {
    this.bytes = bytes;
    this.sha256 = sha256;
  }

  /** Wraps canonical bytes and computes their SHA-256. */
  public static Payload ofCanonicalBytes(byte[] canonicalJson) {
    byte[] copy = canonicalJson.clone();
    return new Payload(copy, sha256(copy));
  }

  /**
   * Wraps bytes read back from a store together with the hash stored beside them.
   *
   * @throws IllegalStateException when the hash does not match the bytes (the file was altered)
   */
  public static Payload ofStored(byte[] canonicalJson, byte[] storedSha256) {
    byte[] actual = sha256(canonicalJson);
    if (!MessageDigest.isEqual(actual, storedSha256)) {
      throw new IllegalStateException("stored payload does not match its stored SHA-256 "
          + HexFormat.of().formatHex(storedSha256));
    }
    return new Payload(canonicalJson, actual);
  }

  /** A copy of the canonical bytes. */
  public byte[] bytes() {
    return bytes.clone();
  }

  /** Number of canonical bytes. */
  public int size() {
    return bytes.length;
  }

  /** The canonical JSON as text (it is UTF-8). */
  public String json() {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /** A copy of the 32-byte SHA-256 of the canonical bytes. */
  public byte[] sha256() {
    return sha256.clone();
  }

  /** Lower-case hex SHA-256 of the canonical bytes. */
  public String sha256Hex() {
    return HexFormat.of().formatHex(sha256);
  }

  /** True when both payloads have the same canonical bytes. */
  public boolean sameContentAs(Payload other) {
    return MessageDigest.isEqual(sha256, other.sha256) && Arrays.equals(bytes, other.bytes);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Payload other && sameContentAs(other);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(sha256);
  }

  @Override
  public String toString() {
    return "Payload[" + bytes.length + " bytes, sha256=" + sha256Hex() + "]";
  }

  private static byte[] sha256(byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK has SHA-256", e);
    }
  }
}

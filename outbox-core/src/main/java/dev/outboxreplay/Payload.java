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
  private final boolean retained;

  private Payload(byte[] bytes, byte[] sha256, boolean retained) {
    this.bytes = bytes;
    this.sha256 = sha256;
    this.retained = retained;
  }

  private Payload(byte[] bytes, byte[] sha256) {
    this(bytes, sha256, true);
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

  /**
   * The payload of a command whose bytes the history retention dropped (a tombstone): only the
   * stored SHA-256 is left. {@link #retained()} is false and the byte accessors throw.
   */
  public static Payload ofDropped(byte[] storedSha256) {
    if (storedSha256.length != 32) {
      throw new IllegalArgumentException("a SHA-256 has 32 bytes, not " + storedSha256.length);
    }
    return new Payload(new byte[0], storedSha256.clone(), false);
  }

  /** False for a tombstone's payload, whose bytes were dropped after its command ended. */
  public boolean retained() {
    return retained;
  }

  /**
   * A copy of the canonical bytes.
   *
   * @throws IllegalStateException when the bytes were dropped ({@link #retained()} is false)
   */
  public byte[] bytes() {
    return retainedBytes().clone();
  }

  /**
   * Number of canonical bytes.
   *
   * @throws IllegalStateException when the bytes were dropped ({@link #retained()} is false)
   */
  public int size() {
    return retainedBytes().length;
  }

  /**
   * The canonical JSON as text (it is UTF-8).
   *
   * @throws IllegalStateException when the bytes were dropped ({@link #retained()} is false)
   */
  public String json() {
    return new String(retainedBytes(), StandardCharsets.UTF_8);
  }

  private byte[] retainedBytes() {
    if (!retained) {
      throw new IllegalStateException("the payload was dropped by the history retention after "
          + "its command ended; only its SHA-256 is kept: " + sha256Hex());
    }
    return bytes;
  }

  /** A copy of the 32-byte SHA-256 of the canonical bytes. */
  public byte[] sha256() {
    return sha256.clone();
  }

  /** Lower-case hex SHA-256 of the canonical bytes. */
  public String sha256Hex() {
    return HexFormat.of().formatHex(sha256);
  }

  /**
   * True when both payloads have the same canonical bytes; when either was dropped, when both
   * have the same SHA-256.
   */
  public boolean sameContentAs(Payload other) {
    return MessageDigest.isEqual(sha256, other.sha256)
        && (!retained || !other.retained || Arrays.equals(bytes, other.bytes));
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
    return "Payload[" + (retained ? bytes.length + " bytes" : "dropped") + ", sha256="
        + sha256Hex() + "]";
  }

  private static byte[] sha256(byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK has SHA-256", e);
    }
  }
}

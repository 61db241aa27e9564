package dev.outboxreplay;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * One delivery of an incoming message, as handed to {@link Inbox#receive}. The same logical
 * message ({@code scope}, {@code messageId}) may be delivered many times.
 *
 * @param scope the local partition the message belongs to (for example a profile)
 * @param messageId the sender-assigned id, stable across redeliveries
 * @param bytes the message as delivered (for example ciphertext)
 */
public record InboxMessage(String scope, String messageId, byte[] bytes) {
  public InboxMessage {
    bytes = bytes.clone();
  }

  @Override
  public byte[] bytes() {
    return bytes.clone();
  }

  /**
   * SHA-256 of the bytes: what the inbox keeps of a consumed message to recognise a redelivery
   * with other bytes.
   */
  public byte[] sha256() {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK has SHA-256", e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof InboxMessage m && scope.equals(m.scope) && messageId.equals(m.messageId)
        && Arrays.equals(bytes, m.bytes);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * scope.hashCode() + messageId.hashCode()) + Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return "InboxMessage[scope=" + scope + ", messageId=" + messageId + ", " + bytes.length
        + " bytes]";
  }
}

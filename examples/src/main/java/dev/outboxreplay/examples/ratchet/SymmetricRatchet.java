package dev.outboxreplay.examples.ratchet;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * A symmetric-key ratchet (the sending/receiving chain of the Signal double ratchet, without the
 * Diffie-Hellman step), using only the JDK: the chain key {@code CK} yields the message key
 * {@code HMAC-SHA256(CK, 0x01)} and the next chain key {@code HMAC-SHA256(CK, 0x02)}; messages are
 * AES-256-GCM under the message key. Once the chain has moved past a message, its key is gone:
 * decrypting that ciphertext again fails. That is what makes consumption irreversible.
 *
 * <p>Wire format of a message: 8-byte big-endian chain index, 12-byte IV, GCM ciphertext+tag.
 * The receiving chain lives in table {@code ratchet_chain(scope, chain_key, next_index)} of the
 * caller's database, read and advanced inside the caller's transaction.
 */
public final class SymmetricRatchet {
  private static final int IV_BYTES = 12;

  private SymmetricRatchet() {}

  /** Creates the chain table and, for a new scope, stores its initial chain key. */
  public static void install(Connection c, String scope, byte[] initialChainKey)
      throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS ratchet_chain (scope VARCHAR PRIMARY KEY, "
          + "chain_key VARBINARY(32) NOT NULL, next_index BIGINT NOT NULL)");
    }
    // Plain SQL that H2 and SQLite both run: insert the scope's chain unless it is there.
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO ratchet_chain (scope, chain_key, "
        + "next_index) SELECT ?, ?, 0 WHERE NOT EXISTS (SELECT 1 FROM ratchet_chain "
        + "WHERE scope = ?)")) {
      ps.setString(1, scope);
      ps.setBytes(2, initialChainKey);
      ps.setString(3, scope);
      ps.executeUpdate();
    }
  }

  /** The sending side: encrypts message {@code index} of a chain that starts at {@code key}. */
  public static final class Sender {
    private byte[] chainKey;
    private long index;
    private final SecureRandom random = new SecureRandom();

    public Sender(byte[] initialChainKey) {
      this.chainKey = initialChainKey.clone();
    }

    /** Encrypts the next message of the chain. */
    public byte[] encrypt(byte[] plaintext) throws GeneralSecurityException {
      byte[] messageKey = hmac(chainKey, (byte) 1);
      chainKey = hmac(chainKey, (byte) 2);
      byte[] iv = new byte[IV_BYTES];
      random.nextBytes(iv);
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(messageKey, "AES"),
          new GCMParameterSpec(128, iv));
      cipher.updateAAD(ByteBuffer.allocate(8).putLong(index).array());
      byte[] sealed = cipher.doFinal(plaintext);
      return ByteBuffer.allocate(8 + IV_BYTES + sealed.length)
          .putLong(index++).put(iv).put(sealed).array();
    }
  }

  /**
   * The receiving side: decrypts {@code message} with the scope's chain and advances the chain
   * past it, in the caller's transaction. Messages must arrive in chain order here (no skipped-key
   * store, to keep the example short).
   *
   * @throws GeneralSecurityException when the message is not the chain's next one, or does not
   *     authenticate (corrupt, or its key was already used)
   */
  public static byte[] decrypt(Connection c, String scope, byte[] message)
      throws GeneralSecurityException, SQLException {
    ByteBuffer in = ByteBuffer.wrap(message);
    if (message.length < 8 + IV_BYTES + 16) {
      throw new GeneralSecurityException("message too short to be a ratchet message");
    }
    long index = in.getLong();
    byte[] iv = new byte[IV_BYTES];
    in.get(iv);
    byte[] sealed = new byte[in.remaining()];
    in.get(sealed);
    byte[] chainKey;
    long next;
    // Lock the chain row before reading it, so that two receivers of one scope take turns: an
    // UPDATE that changes nothing locks the row in H2 and takes the write lock in SQLite (which
    // has no SELECT ... FOR UPDATE).
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE ratchet_chain SET next_index = next_index WHERE scope = ?")) {
      ps.setString(1, scope);
      ps.executeUpdate();
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT chain_key, next_index "
        + "FROM ratchet_chain WHERE scope = ?")) {
      ps.setString(1, scope);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new GeneralSecurityException("no receiving chain for scope " + scope);
        }
        chainKey = rs.getBytes(1);
        next = rs.getLong(2);
      }
    }
    if (index != next) {
      throw new GeneralSecurityException("message " + index + " is not the chain's next ("
          + next + "); its key is " + (index < next ? "already consumed" : "not derived yet"));
    }
    byte[] messageKey = hmac(chainKey, (byte) 1);
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    cipher.init(Cipher.DECRYPT_MODE, new SecretKeySpec(messageKey, "AES"),
        new GCMParameterSpec(128, iv));
    cipher.updateAAD(ByteBuffer.allocate(8).putLong(index).array());
    byte[] plaintext = cipher.doFinal(sealed);
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE ratchet_chain SET chain_key = ?, next_index = ? WHERE scope = ?")) {
      ps.setBytes(1, hmac(chainKey, (byte) 2));
      ps.setLong(2, next + 1);
      ps.setString(3, scope);
      ps.executeUpdate();
    }
    return plaintext;
  }

  private static byte[] hmac(byte[] key, byte constant) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(new byte[] {constant});
  }
}

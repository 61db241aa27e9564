package dev.outboxreplay.h2.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Test helper: an encrypted file holding the same store, block for block, as a plain {@code
 * .mv.db} file, written through H2's own encrypting channel ({@code FileEncrypt}) as H2 writes a
 * file opened with {@code CIPHER=AES} and that file password.
 */
public final class EncryptedCopy {
  private EncryptedCopy() {}

  /** Writes {@code plain}'s bytes, encrypted under {@code fileKey}, into the new file {@code target}. */
  public static void write(byte[] plain, Path target, char[] fileKey) throws IOException {
    try (FileChannel raw = FileChannel.open(target, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileChannel encrypted = FileKey.view(FileKey.of(fileKey), raw, target)) {
      ByteBuffer in = ByteBuffer.wrap(plain);
      while (in.hasRemaining()) {
        encrypted.write(in, in.position());
      }
      raw.force(true);
    }
  }

  /** The store's bytes of the encrypted file {@code file}, as H2 reads them with {@code fileKey}. */
  public static byte[] read(Path file, char[] fileKey) throws IOException {
    try (FileChannel raw = FileChannel.open(file, StandardOpenOption.READ);
        FileChannel encrypted = FileKey.view(FileKey.of(fileKey), raw, file)) {
      ByteBuffer out = ByteBuffer.allocate((int) encrypted.size());
      while (out.hasRemaining() && encrypted.read(out, out.position()) > 0) {
        // positional reads until the buffer is full
      }
      return out.array();
    }
  }
}

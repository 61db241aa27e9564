package dev.outboxreplay.h2.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.util.Arrays;
import org.h2.mvstore.MVStore;
import org.h2.store.fs.FileBase;
import org.h2.store.fs.encrypt.FileEncrypt;
import org.h2.store.fs.encrypt.FilePathEncrypt;

/**
 * The key of an encrypted {@code .mv.db} file ({@code CIPHER=AES}), in the forms H2's store uses,
 * so that the library's looks at a file ({@link StoreHeaderRepair}, {@link CleanMarkRepair})
 * read and write an encrypted file's blocks as H2 does. {@code null} stands for a plain file
 * wherever a {@code FileKey} is taken.
 *
 * <p>While an {@code H2Database} of this JVM has an encrypted file open, {@link FileCheck} keeps
 * its key with the file ({@link H2File}), for the look {@link
 * RecoveringFileSystem} takes when H2 itself takes the file over: H2 makes that path from the
 * URL, which carries no key. A wrong key only makes the look find nothing to change: H2 refuses
 * that open anyway.
 *
 * <p>The key is never printed ({@link #toString}).
 */
final class FileKey {
  /** As {@code MVStore.Builder.encryptionKey} takes it; see {@link #of}. */
  private final char[] storeKey;

  private FileKey(char[] storeKey) {
    this.storeKey = storeKey;
  }

  /**
   * The key H2 uses for a file opened with {@code CIPHER=AES} and file password {@code
   * fileKey}, or null when {@code fileKey} is null. H2 turns the password into its UTF-16 bytes
   * ({@code FilePathEncrypt.getPasswordBytes}), decodes those back into characters as {@code
   * org.h2.mvstore.db.Store.decodePassword} does, and gives its store that.
   */
  static FileKey of(char[] fileKey) {
    if (fileKey == null) {
      return null;
    }
    byte[] bytes = FilePathEncrypt.getPasswordBytes(fileKey);
    char[] key = new char[bytes.length / 2];
    for (int i = 0; i < key.length; i++) {
      key[i] = (char) (((bytes[i + i] & 255) << 16) | (bytes[i + i + 1] & 255));
    }
    Arrays.fill(bytes, (byte) 0);
    return new FileKey(key);
  }

  /** Sets the key on a builder of H2's store for the file ({@code key} may be null). */
  static MVStore.Builder apply(FileKey key, MVStore.Builder builder) {
    return key == null ? builder : builder.encryptionKey(key.storeKey.clone());
  }

  /**
   * The file as H2's store reads and writes it through {@code raw}, a channel of the file's
   * bytes: {@code raw} itself when {@code key} is null, otherwise H2's decrypting view of it
   * ({@code FileEncrypt}), whose positions start after the encryption header. Closing the view
   * leaves {@code raw} open; positional reads and writes only.
   */
  static FileChannel view(FileKey key, FileChannel raw, Path file) {
    if (key == null) {
      return raw;
    }
    return new FileEncrypt(file.toString(), FilePathEncrypt.getPasswordBytes(key.storeKey),
        new LeftOpen(raw));
  }

  @Override
  public String toString() {
    return "FileKey[hidden]";
  }

  /** A channel that reads and writes through another by position and never closes it. */
  private static final class LeftOpen extends FileBase {
    private final FileChannel base;

    LeftOpen(FileChannel base) {
      this.base = base;
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      return base.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
      return base.write(src, position);
    }

    @Override
    public int read(ByteBuffer dst) {
      throw new UnsupportedOperationException("positional reads only");
    }

    @Override
    public int write(ByteBuffer src) {
      throw new UnsupportedOperationException("positional writes only");
    }

    @Override
    public long position() {
      return 0;
    }

    @Override
    public FileChannel position(long newPosition) {
      throw new UnsupportedOperationException("positional reads and writes only");
    }

    @Override
    public long size() throws IOException {
      return base.size();
    }

    @Override
    public FileChannel truncate(long size) {
      throw new UnsupportedOperationException("the view does not change the file's length");
    }

    @Override
    public void force(boolean metaData) throws IOException {
      base.force(metaData);
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) {
      throw new UnsupportedOperationException("the caller holds the file's lock");
    }

    @Override
    protected void implCloseChannel() {
      // the caller's channel: left open
    }
  }
}

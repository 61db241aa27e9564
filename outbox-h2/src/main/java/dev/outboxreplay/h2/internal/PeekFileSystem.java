package dev.outboxreplay.h2.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.NonWritableChannelException;
import java.nio.file.Path;
import org.h2.store.fs.FileBase;
import org.h2.store.fs.FilePath;
import org.h2.store.fs.FilePathWrapper;

/**
 * Lets H2's read-only store read a file without locking it: files open for reading only, and a
 * lock request is granted without taking a lock. While {@link #readThrough} lends a file's
 * channel (kept by the file's {@link H2File}), the file is read through that channel and never closed: used by {@link
 * CleanMarkRepair} while H2's own open of the file waits under the exclusive lock it took on
 * that channel (a second lock of the JVM on the file would be refused, and closing another
 * channel of the file would drop the lock H2 holds, POSIX locks being the process's). Nothing
 * written through it reaches the file.
 *
 * <p>Used as the {@code outboxpeek:} prefix; registered with H2 by {@link #register}. Public only
 * because H2 makes each path of the scheme with the class's public constructor.
 */
public final class PeekFileSystem extends FilePathWrapper {
  /** The URL prefix (without the colon). */
  static final String SCHEME = "outboxpeek";
  private static final PeekFileSystem INSTANCE = new PeekFileSystem();

  /** Makes the scheme known to H2 in this JVM; idempotent. */
  static void register() {
    FilePath.register(INSTANCE);
  }

  /** What a look through a lent channel returns. */
  interface Look<T> {
    T run() throws IOException;
  }

  /**
   * Runs {@code look} with {@code file} read through {@code channel}, which stays open and is
   * read with positions only (its own position does not move).
   */
  static <T> T readThrough(Path file, FileChannel channel, Look<T> look) throws IOException {
    H2File.lend(file, channel);
    try {
      return look.run();
    } finally {
      H2File.takeBack(file, channel);
    }
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public boolean canWrite() {
    return false;
  }

  @Override
  public FileChannel open(String mode) throws IOException {
    FileChannel lent = H2File.lentChannel(Path.of(getBase().toString()));
    return lent != null ? new Unlocked(lent, false) : new Unlocked(getBase().open("r"), true);
  }

  /** A read-only channel whose lock requests are granted without a lock. */
  private static final class Unlocked extends FileBase {
    private final FileChannel base;
    private final boolean owned;
    /** This channel's own position: a lent channel's is not moved. */
    private long position;

    Unlocked(FileChannel base, boolean owned) {
      this.base = base;
      this.owned = owned;
    }

    @Override
    public synchronized FileLock tryLock(long position, long size, boolean shared) {
      return new FileLock(this, position, size, shared) {
        private boolean valid = true;

        @Override
        public boolean isValid() {
          return valid && isOpen();
        }

        @Override
        public void release() {
          valid = false;
        }
      };
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
      int n = base.read(dst, position);
      if (n > 0) {
        position += n;
      }
      return n;
    }

    @Override
    public int read(ByteBuffer dst, long at) throws IOException {
      return base.read(dst, at);
    }

    @Override
    public int write(ByteBuffer src) {
      throw new NonWritableChannelException();
    }

    @Override
    public int write(ByteBuffer src, long position) {
      throw new NonWritableChannelException();
    }

    @Override
    public long position() {
      return position;
    }

    @Override
    public FileChannel position(long newPosition) {
      position = newPosition;
      return this;
    }

    @Override
    public long size() throws IOException {
      return base.size();
    }

    @Override
    public FileChannel truncate(long size) {
      throw new NonWritableChannelException();
    }

    @Override
    public void force(boolean metaData) {
      // nothing is written
    }

    @Override
    protected void implCloseChannel() throws IOException {
      if (owned) {
        base.close();
      }
    }
  }
}

package dev.outboxreplay.h2.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import org.h2.store.fs.FileBase;
import org.h2.store.fs.FilePath;
import org.h2.store.fs.FilePathWrapper;

/**
 * H2's default file system with one addition: the moment H2 takes the exclusive lock on a
 * {@code .mv.db} file, before it reads the store header, {@link StoreHeaderRepair} looks at the
 * file through H2's own channel and under H2's own lock, and repairs a header that lags behind
 * the file's last commits.
 *
 * <p>Why here and not before {@code getConnection}: in multi-process mode a connection whose
 * serving process was just killed is opened by H2 itself. A look before the call found the file
 * still locked while the killed process was being torn down, and did nothing; by the time H2
 * connected, the server was gone and H2 opened the file and ran its recovery with the header
 * unrepaired, and the killed process's last commits were lost without an error. Seen as lost
 * accepts in {@code OutboxSoakTest} when the machine was busy (a kill takes longer to complete
 * then). Under H2's lock no other process can open or write the file meanwhile.
 *
 * <p>While the library opens the file, its channel also hands an {@link OpenJournal} what each
 * write is about to replace, so that a failed open can leave the file as it was.
 *
 * <p>Used as the {@code outboxrecover:} prefix of the library's file URLs; every other file
 * operation goes straight to the default file system. Registered with H2 by {@link #register}.
 * It relies on H2 2.5's {@code SingleFileStore} taking the lock right after opening the channel
 * and before reading anything: {@code
 * StoreHeaderRepairTest.aConnectionThatTakesTheFileOverRepairsItsHeaderUnderH2sLock} fails
 * if an H2 upgrade changes that.
 */
public final class RecoveringFileSystem extends FilePathWrapper {
  /** The URL prefix (without the colon). */
  public static final String SCHEME = "outboxrecover";
  private static final RecoveringFileSystem INSTANCE = new RecoveringFileSystem();

  /** Makes the scheme known to H2 in this JVM; idempotent. */
  public static void register() {
    FilePath.register(INSTANCE);
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public FileChannel open(String mode) throws IOException {
    FileChannel base = getBase().open(mode);
    String name = getBase().toString();
    return name.endsWith(".mv.db") && !"r".equals(mode) ? new RepairOnLock(base, Path.of(name))
        : base;
  }

  /** A channel that runs the header repair when it gets an exclusive lock on the whole file. */
  static final class RepairOnLock extends FileBase {
    private final FileChannel base;
    private final Path file;
    /**
     * The journal of the open this channel belongs to, or null. Looked up once: a journal begins
     * only before the library's pool opens the file (when no channel of this JVM has it), and
     * ignores writes once it ends, so a write never needs to look again.
     */
    private final OpenJournal journal;

    RepairOnLock(FileChannel base, Path file) {
      this.base = base;
      this.file = file;
      this.journal = H2File.journalOf(file);
    }

    @Override
    public synchronized FileLock tryLock(long position, long size, boolean shared)
        throws IOException {
      FileLock lock = base.tryLock(position, size, shared);
      if (lock != null && !shared) {
        StoreHeaderRepair.repairLockedLogged(base, file);
      }
      return lock;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
      return base.read(dst);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      return base.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
      journal(base.position(), src.remaining());
      return base.write(src);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
      journal(position, src.remaining());
      return base.write(src, position);
    }

    /** Hands an {@link OpenJournal} of this file what a write is about to replace. */
    private void journal(long position, long length) throws IOException {
      if (journal != null) {
        journal.beforeWrite(base, position, length);
      }
    }

    @Override
    public long position() throws IOException {
      return base.position();
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
      base.position(newPosition);
      return this;
    }

    @Override
    public long size() throws IOException {
      return base.size();
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
      journal(size, Math.max(0, base.size() - size));
      base.truncate(size);
      return this;
    }

    @Override
    public void force(boolean metaData) throws IOException {
      base.force(metaData);
    }

    @Override
    protected void implCloseChannel() throws IOException {
      base.close();
    }

    @Override
    public String toString() {
      return SCHEME + ":" + file;
    }
  }
}

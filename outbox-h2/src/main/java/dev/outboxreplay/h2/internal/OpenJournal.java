package dev.outboxreplay.h2.internal;

import dev.outboxreplay.OutboxStorageException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What H2 writes to a {@code .mv.db} file while the library opens it, kept so that a failed open
 * leaves the file as it was. {@link FileCheck} reads only the headers and chunk metadata; damage
 * inside a page that H2's database open reads (its own table of tables, for one) passes that
 * check, and then H2, failing, closes its store normally on the way out, which writes a chunk
 * and a new store header into the damaged file. While a journal is active for a file, {@link
 * RecoveringFileSystem}'s channel hands it the bytes each write or truncation is about to
 * replace (a copy of what stood there before the open; what lies beyond the file's length at
 * the start is given back by truncation). {@link #undo} puts them back.
 *
 * <p>Only writes through the library's channel are journaled, an encrypted file's included
 * (its encrypted bytes are put back as they were); not the header repair that {@link
 * StoreHeaderRepair} makes under H2's lock. Thread-safe.
 */
public final class OpenJournal implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(OpenJournal.class);
  private final Path file;
  private final long sizeAtStart;
  /** Set by {@link #close}: later writes are not the open's, and are not kept. */
  private boolean ended;
  /** Bytes as they were before the open, in the order they were about to be replaced. */
  private final List<PreImage> preImages = new ArrayList<>();

  private record PreImage(long position, byte[] bytes) {}

  private OpenJournal(Path file, long sizeAtStart) {
    this.file = file;
    this.sizeAtStart = sizeAtStart;
  }

  /**
   * Starts journaling {@code file}, an existing {@code .mv.db}; null when another open in this
   * JVM journals it already (that one undoes, or nobody does).
   *
   * @throws OutboxStorageException when the file's length cannot be read
   */
  public static OpenJournal begin(Path file) {
    Path key = FileIdentity.of(file);
    long size;
    try {
      size = Files.size(key);
    } catch (IOException e) {
      throw new OutboxStorageException("cannot open database file " + file + ": " + e, e);
    }
    OpenJournal journal = new OpenJournal(key, size);
    return H2File.beginJournal(journal) ? journal : null;
  }

  /** The file journaled, by its {@link FileIdentity}. */
  Path file() {
    return file;
  }

  /**
   * After the open failed with {@code failure}: puts back what H2 wrote meanwhile (H2 closes its
   * store normally on the way out of a failed open, writing a chunk and a header into the file)
   * and says so in a suppressed exception of {@code failure}. Not after a failure that may pass
   * by itself (another process took the file): that process may be writing now.
   */
  public void undoAfter(RuntimeException failure) {
    if (wroteSomething() && !(failure instanceof OutboxStorageException s && s.retryable())
        && undo()) {
      failure.addSuppressed(new OutboxStorageException("what H2 wrote to " + file
          + " during the failed open was undone"));
    }
  }

  /**
   * Keeps what {@code channel} holds in {@code [position, position + length)} within the file's
   * length at the start, before a write there.
   */
  synchronized void beforeWrite(FileChannel channel, long position, long length)
      throws IOException {
    long end = Math.min(position + length, sizeAtStart);
    if (ended || position >= end) {
      return;
    }
    ByteBuffer old = ByteBuffer.allocate(Math.toIntExact(end - position));
    while (old.hasRemaining()) {
      if (channel.read(old, position + old.position()) < 0) {
        break;
      }
    }
    preImages.add(new PreImage(position, java.util.Arrays.copyOf(old.array(), old.position())));
  }

  /** Whether H2 wrote anything through the library's channel since {@link #begin}. */
  synchronized boolean wroteSomething() {
    return !preImages.isEmpty();
  }

  /**
   * Puts back every byte H2 replaced and cuts the file to its length at the start, under an
   * exclusive lock on the file, as H2 takes it. Does nothing when the lock is held elsewhere
   * (another process opened the file after H2 let go of it): that process's writes are not
   * undone.
   *
   * @return whether the file was put back
   */
  synchronized boolean undo() {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE,
        StandardOpenOption.READ)) {
      FileLock lock = channel.tryLock();
      if (lock == null) {
        LOG.warn("{} could not be put back as it was before the failed open: another process "
            + "holds it", file);
        return false;
      }
      try (lock) {
        for (int i = preImages.size() - 1; i >= 0; i--) {
          PreImage p = preImages.get(i);
          ByteBuffer bytes = ByteBuffer.wrap(p.bytes());
          while (bytes.hasRemaining()) {
            channel.write(bytes, p.position() + bytes.position());
          }
        }
        if (channel.size() > sizeAtStart) {
          channel.truncate(sizeAtStart);
        }
        channel.force(true);
      }
      return true;
    } catch (IOException | RuntimeException e) {
      LOG.warn("{} could not be put back as it was before the failed open: {}", file,
          e.toString());
      return false;
    }
  }

  /** Ends journaling and lets go of what was kept; idempotent. */
  @Override
  public void close() {
    synchronized (this) {
      ended = true;
      preImages.clear();
    }
    H2File.endJournal(this);
  }
}

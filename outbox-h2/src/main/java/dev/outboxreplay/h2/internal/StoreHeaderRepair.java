package dev.outboxreplay.h2.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.h2.mvstore.DataUtils;

/**
 * Makes commits that H2 2.5's recovery would drop after a process kill reachable again, before H2
 * opens the file.
 *
 * <p>The gap, read from H2's {@code RandomAccessStore}: when a commit's chunk is written into free
 * space other than where the previous chunk predicted ({@code next}), H2 rewrites the store header
 * so that recovery can find it, but the header it writes still names the previous chunk ({@code
 * lastChunk} is updated only after the write). After a kill, recovery starts at that previous
 * chunk, follows its wrong prediction and the file's last chunk, never reaches the new one or the
 * chunks written after it, and opens the older state: commits that had returned are gone, and no
 * error says so. {@code FirstAckStressTest}-style kills right after an accept lost it in about 1
 * of 300 kills; {@code SET RETENTION_TIME 0}, which frees space sooner, lost one in the first
 * rounds.
 *
 * <p>The repair: when the file was not closed cleanly, it follows the chain H2's recovery
 * follows (the header's chunk or the file's last chunk, then each chunk's {@code next}
 * prediction) to where it ends. When the chunk of the next version is in the file with a valid
 * header and footer, exactly once, not older, its chain is followed too, and so on; the header
 * (both copies) is then rewritten to name the last chunk so reached, as H2 meant to. The chain
 * can break more than once: a kill after a second write into free space and before the header
 * write that would have named it, or a header that names a chunk whose successor was written
 * where it predicted. H2's own recovery then checks, as always, that every chunk the newest
 * state refers to is present, falling back to an older state if not. Nothing else in the
 * file is touched. An encrypted file is read and written through H2's decrypting view of it,
 * with the key it is opened with ({@link FileKey}).
 *
 * <p>It runs at two moments: {@link FileCheck} before the library's first open of a file no
 * process holds, and {@link RecoveringFileSystem} each time H2 takes the file's exclusive lock,
 * which includes a process taking the file over inside {@code getConnection} after the one
 * serving it was killed or closed it. At the second, a cleanly closed file is handed to {@link
 * CleanMarkRepair}.
 */
public final class StoreHeaderRepair {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(StoreHeaderRepair.class);
  private static final int BLOCK = 4096;
  private static final int CHUNK_HEADER_MAX = 1024;
  private static final int CHUNK_FOOTER = 128;
  private static final int SCAN_BLOCKS = 256;
  /** H2's {@code Chunk.MAX_ID}: chunk ids wrap around at it. */
  private static final int MAX_CHUNK_ID = (1 << 26) - 1;
  private static final byte[] CHUNK_PREFIX = "chunk:".getBytes(StandardCharsets.ISO_8859_1);

  /** A chunk found in the file: its header fields, and the block it starts at. */
  private record Chunk(long block, int id, long version, long length, long time, long next) {}

  private StoreHeaderRepair() {}

  /**
   * Repairs {@code file} as {@link #repairIfBehind(Path, FileKey)} does, logging a change as a
   * warning; a failure to look is logged and left to H2, never thrown.
   */
  static void repairLogged(Path file, FileKey key, String when) {
    logged(file, when, () -> repairIfBehind(file, key));
  }

  /**
   * Repairs {@code file} through {@code channel}, on which the caller (H2, through {@link
   * RecoveringFileSystem}) has just taken the exclusive lock and from which it has not read yet;
   * logged as {@link #repairLogged} is. An encrypted file is read with the key an {@code
   * H2Database} of this JVM opens it with ({@link H2File}).
   */
  static void repairLockedLogged(FileChannel channel, Path file) {
    logged(file, "as H2 took the file over",
        () -> repair(channel, file, H2File.keyOpenedWith(file), true));
  }

  /** One look at the file: what it changed, for the log, or null. */
  private interface Look {
    String run() throws IOException;
  }

  private static void logged(Path file, String when, Look look) {
    try {
      String repaired = look.run();
      if (repaired != null) {
        LOG.warn("Repaired {}: {}", when, repaired);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not check the store header of {} for commits H2's recovery would miss: {}",
          file, e.toString());
    }
  }

  /**
   * Rewrites the store header of {@code file} when it names a chunk older than the chunk chain
   * that follows it, holding an exclusive lock on the file meanwhile.
   *
   * @return what was changed, for the log, or null when nothing was (the file is clean, in use,
   *     not readable here, or its header already leads to its newest commit)
   * @throws IOException when the file cannot be read or the header cannot be written
   */
  public static String repairIfBehind(Path file) throws IOException {
    return repairIfBehind(file, null);
  }

  /** {@link #repairIfBehind(Path)} for a file encrypted with {@code key} (null: plain). */
  static String repairIfBehind(Path file, FileKey key) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      FileLock lock = tryLock(channel);
      if (lock == null) {
        return null; // another process has it open: it is past recovery
      }
      try (lock) {
        return repair(channel, file, key, false);
      }
    }
  }

  /**
   * The repair, through {@code raw} (the file's bytes) under an exclusive lock the caller holds;
   * with {@code mendCleanlyClosed}, a cleanly closed file goes to {@link
   * CleanMarkRepair#mendLocked} (under H2's lock; before the library's first open, {@link
   * FileCheck} looks at such a file itself).
   */
  private static String repair(FileChannel raw, Path file, FileKey key,
      boolean mendCleanlyClosed) throws IOException {
    FileChannel channel = FileKey.view(key, raw, file);
    long blocks = channel.size() / BLOCK;
    if (blocks < 3) {
      return null;
    }
    Map<String, String> first = checksummed(read(channel, 0, BLOCK));
    Map<String, String> second = checksummed(read(channel, BLOCK, BLOCK));
    Map<String, String> header = newer(first, second);
    if (header == null || !header.containsKey("chunk") || !header.containsKey("version")) {
      return null; // H2 reports an unreadable header itself
    }
    boolean agree = first != null && second != null
        && hex(first.get("version")) == hex(second.get("version"));
    if (agree && hex(header.getOrDefault("clean", "0")) != 0) {
      // closed cleanly: the header names the last chunk, but H2 may not open it (CleanMarkRepair)
      return mendCleanlyClosed
          ? CleanMarkRepair.mendLocked(raw, file, key, hex(header.get("version"))) : null;
    }
    long headerVersion = hex(header.get("version"));
    long headerBlock = hex(header.getOrDefault("block", "0"));
    ByteBuffer scan = null;
    Chunk named = null;
    Chunk tail = null;
    Map<Long, Chunk> byBlock = new HashMap<>();
    Map<Long, List<Chunk>> byVersion = new HashMap<>();
    // one sequential pass over the file, SCAN_BLOCKS at a time; only blocks that start like a
    // chunk header are looked at closer
    long scanStart = 2;
    for (long block = 2; block < blocks; block++) {
      if (scan == null || block == scanStart + SCAN_BLOCKS) {
        scanStart = block;
        scan = ByteBuffer.wrap(read(channel, block * BLOCK,
            (int) Math.min(SCAN_BLOCKS, blocks - block) * BLOCK));
      }
      if (!startsLikeAChunk(scan, (int) (block - scanStart) * BLOCK)) {
        continue;
      }
      Chunk c = chunkAt(channel, block, blocks);
      if (c == null) {
        continue;
      }
      if (c.version() == headerVersion && c.block() == headerBlock) {
        named = c;
      }
      if (c.block() + c.length() == blocks) {
        tail = c;
      }
      byBlock.put(c.block(), c);
      byVersion.computeIfAbsent(c.version(), v -> new ArrayList<>()).add(c);
      // no skipping over a chunk's blocks: a dead chunk's header and footer may still be intact
      // around a newer chunk written inside its old space
    }
    if (named == null) {
      return null; // the header's own chunk is gone: H2 decides (and the library's check refuses)
    }
    // Where H2's recovery ends: the header's chunk or the file's last chunk, whichever is newer,
    // then the chain of predictions (RandomAccessStore.readStoreHeader).
    Chunk reached = followPredictions(tail != null && tail.version() > named.version() ? tail
        : named, byBlock);
    // The commits after it: each time exactly one chunk of the next version, not older, written
    // where no prediction leads (H2 was killed before the header that would name it), and the
    // chain from it. Several breaks happen when the header named a chunk whose successor was
    // predicted, or when H2 was killed before the header write of a later break.
    Chunk next = reached;
    while (true) {
      List<Chunk> successors = byVersion.getOrDefault(next.version() + 1, List.of());
      if (successors.size() != 1 || successors.get(0).time() < next.time()) {
        break; // nothing after it, or not one unambiguous successor
      }
      next = followPredictions(successors.get(0), byBlock);
    }
    if (next == reached) {
      return null; // H2 finds the newest commit itself
    }
    HashMap<String, String> repaired = new HashMap<>(header);
    repaired.remove("clean");
    repaired.put("block", Long.toHexString(next.block()));
    repaired.put("chunk", Integer.toHexString(next.id()));
    repaired.put("version", Long.toHexString(next.version()));
    writeHeader(channel, repaired);
    return "the store header of " + file + " named chunk " + header.get("chunk") + " (version "
        + headerVersion + "), from which H2's recovery reaches chunk "
        + Integer.toHexString(reached.id()) + " (version " + reached.version()
        + "), although chunk " + Integer.toHexString(next.id()) + " (version " + next.version()
        + ") was written after it; the header now names it, so the commits up to it are recovered";
  }

  /** Both store header blocks of the file, as they are. */
  static byte[] headerBlocks(FileChannel channel) throws IOException {
    return read(channel, 0, 2 * BLOCK);
  }

  /**
   * Writes the store header without its clean-shutdown mark, through {@code channel} on which the
   * caller holds the exclusive lock, when both copies agree, are clean and record {@code version}.
   * Without the mark, H2's open checks the chunks as after a process kill ({@link
   * CleanMarkRepair}). Nothing else in the file changes.
   *
   * @return false when nothing was written
   */
  static boolean writeWithoutCleanMark(FileChannel channel, long version) throws IOException {
    Map<String, String> first = checksummed(read(channel, 0, BLOCK));
    Map<String, String> second = checksummed(read(channel, BLOCK, BLOCK));
    if (first == null || second == null || !first.equals(second)
        || hex(first.getOrDefault("clean", "0")) == 0
        || hex(first.getOrDefault("version", "0")) != version) {
      return false;
    }
    HashMap<String, String> unclean = new HashMap<>(first);
    unclean.remove("clean");
    writeHeader(channel, unclean);
    return true;
  }

  /** Writes back blocks {@link #headerBlocks} returned, and syncs. */
  static void writeHeaderBlocks(FileChannel channel, byte[] blocks) throws IOException {
    ByteBuffer out = ByteBuffer.wrap(blocks);
    while (out.hasRemaining()) {
      channel.write(out, out.position());
    }
    channel.force(true);
  }

  /** An exclusive lock on the whole file, or null when this or another process holds one. */
  static FileLock tryLock(FileChannel channel) throws IOException {
    try {
      return channel.tryLock();
    } catch (OverlappingFileLockException e) {
      return null;
    }
  }

  /** Writes {@code header}, checksummed, into both header blocks of the file, and syncs. */
  private static void writeHeader(FileChannel channel, Map<String, String> header)
      throws IOException {
    HashMap<String, String> fields = new HashMap<>(header);
    fields.remove("fletcher");
    StringBuilder text = DataUtils.appendMap(new StringBuilder(), fields);
    byte[] body = text.toString().getBytes(StandardCharsets.ISO_8859_1);
    DataUtils.appendMap(text, "fletcher", DataUtils.getFletcher32(body, 0, body.length));
    text.append('\n');
    byte[] bytes = text.toString().getBytes(StandardCharsets.ISO_8859_1);
    byte[] blocks = new byte[2 * BLOCK];
    System.arraycopy(bytes, 0, blocks, 0, bytes.length);
    System.arraycopy(bytes, 0, blocks, BLOCK, bytes.length);
    writeHeaderBlocks(channel, blocks);
  }

  /** The last chunk of the chain of {@code next} predictions from {@code from}, as H2 takes it. */
  private static Chunk followPredictions(Chunk from, Map<Long, Chunk> byBlock) {
    Chunk c = from;
    while (c.next() != 0) {
      Chunk n = byBlock.get(c.next());
      if (n == null || n.id() != ((c.id() + 1) & MAX_CHUNK_ID) || n.version() <= c.version()) {
        break;
      }
      c = n;
    }
    return c;
  }

  private static boolean startsLikeAChunk(ByteBuffer scan, int offset) {
    for (int i = 0; i < CHUNK_PREFIX.length; i++) {
      if (scan.get(offset + i) != CHUNK_PREFIX[i]) {
        return false;
      }
    }
    return true;
  }

  /** The chunk starting at {@code block} when its header and footer agree and check out. */
  private static Chunk chunkAt(FileChannel channel, long block, long blocks) throws IOException {
    Map<String, String> fields = headerFields(read(channel, block * BLOCK, CHUNK_HEADER_MAX));
    if (fields == null) {
      return null;
    }
    try {
      long length = hex(fields.get("len"));
      if (length <= 0 || block + length > blocks) {
        return null;
      }
      Map<String, String> footer = checksummed(read(channel, (block + length) * BLOCK
          - CHUNK_FOOTER, CHUNK_FOOTER));
      if (footer == null || !fields.get("chunk").equals(footer.get("chunk"))
          || !fields.get("version").equals(footer.get("version"))
          || !fields.get("len").equals(footer.get("len"))) {
        return null;
      }
      return new Chunk(block, (int) hex(fields.get("chunk")), hex(fields.get("version")), length,
          hex(fields.getOrDefault("time", "0")), hex(fields.getOrDefault("next", "0")));
    } catch (RuntimeException e) {
      return null; // not a chunk header after all
    }
  }

  private static Map<String, String> headerFields(byte[] bytes) {
    String text = new String(bytes, StandardCharsets.ISO_8859_1);
    if (!text.startsWith("chunk:")) {
      return null;
    }
    int end = text.indexOf('\n');
    try {
      Map<String, String> fields = DataUtils.parseMap((end < 0 ? text : text.substring(0, end))
          .trim());
      return fields.containsKey("chunk") && fields.containsKey("len")
          && fields.containsKey("version") ? fields : null;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** A {@code key:value,...,fletcher:x} line whose checksum matches, or null. */
  private static Map<String, String> checksummed(byte[] bytes) {
    String text = new String(bytes, StandardCharsets.ISO_8859_1);
    int end = text.indexOf('\n');
    if (end < 0) {
      return null;
    }
    String line = text.substring(0, end).trim();
    int at = line.lastIndexOf(",fletcher:");
    if (at < 0) {
      return null;
    }
    byte[] body = line.substring(0, at).getBytes(StandardCharsets.ISO_8859_1);
    try {
      if (DataUtils.getFletcher32(body, 0, body.length)
          != (int) Long.parseLong(line.substring(at + ",fletcher:".length()), 16)) {
        return null;
      }
      return DataUtils.parseMap(line);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static Map<String, String> newer(Map<String, String> a, Map<String, String> b) {
    if (a == null || b == null) {
      return a == null ? b : a;
    }
    try {
      return hex(b.get("version")) > hex(a.get("version")) ? b : a;
    } catch (RuntimeException e) {
      return a;
    }
  }

  private static byte[] read(FileChannel channel, long position, int length) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(length);
    while (buffer.hasRemaining()) {
      if (channel.read(buffer, position + buffer.position()) < 0) {
        break;
      }
    }
    return buffer.array();
  }

  private static long hex(String value) {
    return value == null ? 0 : Long.parseLong(value, 16);
  }
}

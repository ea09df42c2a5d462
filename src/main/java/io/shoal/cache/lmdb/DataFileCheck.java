package io.shoal.cache.lmdb;

import static java.nio.file.StandardOpenOption.READ;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.stream.Stream;

/**
 * Checks a shard's {@code data.mdb} against its own meta pages before LMDB maps it. LMDB trusts
 * the file: a page it was told exists but that lies past the end of a truncated file is a SIGBUS
 * on first touch, which kills the JVM (every start, for a node; and {@code cache check} itself).
 * So the two meta pages are read with plain file I/O first, and the newest one (the one LMDB
 * would use) must describe pages that fit in the file.
 *
 * <p>Layout (LMDB 0.9, 64-bit, native byte order): each meta page is a 16-byte page header
 * (flags at 10), then magic (u32), version (u32), address, map size, the free and main database
 * records (48 bytes each; the free one's first u32 is the page size), last page number and
 * transaction id.
 */
final class DataFileCheck {
  static final String DATA_FILE = "data.mdb";
  static final String LOCK_FILE = "lock.mdb";

  private static final int MAGIC = 0xBEEFC0DE;
  private static final int DATA_VERSION = 1;
  private static final int P_META = 0x08;
  private static final long NO_PAGE = -1L;
  private static final int FLAGS_AT = 10;
  private static final int META_AT = 16;
  private static final int PAGE_SIZE_AT = META_AT + 24;
  private static final int FREE_ROOT_AT = META_AT + 24 + 40;
  private static final int MAIN_ROOT_AT = META_AT + 24 + 48 + 40;
  private static final int LAST_PAGE_AT = META_AT + 24 + 96;
  private static final int TXN_ID_AT = LAST_PAGE_AT + 8;
  private static final int META_SIZE = TXN_ID_AT + 8;
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  private DataFileCheck() {}

  /**
   * Why LMDB must not open the environment in {@code shardDirectory}, or null when it may: its
   * data file is absent (a new shard) or consistent with its meta pages.
   */
  static String damage(Path shardDirectory) {
    Path data = shardDirectory.resolve(DATA_FILE);
    try (FileChannel file = FileChannel.open(data, READ)) {
      long size = file.size();
      if (size == 0) {
        return DATA_FILE + " is empty (0 bytes): not an LMDB file";
      }
      ByteBuffer first = read(file, 0);
      if (first == null) {
        return DATA_FILE + " is " + size + " bytes, too short for an LMDB meta page";
      }
      String bad = metaProblem(first, 0);
      if (bad != null) {
        return bad;
      }
      long pageSize = Integer.toUnsignedLong(first.getInt(PAGE_SIZE_AT));
      if (pageSize < META_SIZE || pageSize > (1 << 16) || Long.bitCount(pageSize) != 1) {
        return DATA_FILE + " names a page size of " + pageSize + " bytes";
      }
      ByteBuffer second = read(file, pageSize);
      if (second == null) {
        return DATA_FILE + " is " + size + " bytes, shorter than its two meta pages (" + 2 * pageSize + ")";
      }
      bad = metaProblem(second, 1);
      if (bad != null) {
        return bad;
      }
      ByteBuffer meta = second.getLong(TXN_ID_AT) > first.getLong(TXN_ID_AT) ? second : first;
      long lastPage = meta.getLong(LAST_PAGE_AT);
      if (lastPage < 1 || lastPage > Long.MAX_VALUE / pageSize - 1) {
        return DATA_FILE + " names a last page of " + lastPage;
      }
      long needed = (lastPage + 1) * pageSize;
      if (needed > size) {
        return DATA_FILE + " is " + size + " bytes but its meta page says " + needed
            + " (last page " + lastPage + " x " + pageSize + "): truncated";
      }
      for (int at : new int[] {FREE_ROOT_AT, MAIN_ROOT_AT}) {
        long root = meta.getLong(at);
        if (root != NO_PAGE && (root < 2 || root > lastPage)) {
          return DATA_FILE + " has a database root at page " + root + ", outside pages 2.." + lastPage;
        }
      }
      return null;
    } catch (NoSuchFileException e) {
      return null;
    } catch (AccessDeniedException e) {
      return "cannot read " + DATA_FILE + ": permission denied";
    } catch (IOException e) {
      return "cannot read " + DATA_FILE + ": " + e.getMessage();
    }
  }

  /** The meta page at {@code offset}, or null when the file ends before it does. */
  private static ByteBuffer read(FileChannel file, long offset) throws IOException {
    ByteBuffer page = ByteBuffer.allocate(META_SIZE).order(ByteOrder.nativeOrder());
    while (page.hasRemaining()) {
      if (file.read(page, offset + page.position()) < 0) {
        return null;
      }
    }
    return page.flip();
  }

  private static String metaProblem(ByteBuffer page, int which) {
    if (page.getInt(META_AT) != MAGIC) {
      return DATA_FILE + ": meta page " + which + " has no LMDB magic number: not an LMDB file";
    }
    if ((page.getShort(FLAGS_AT) & P_META) == 0) {
      return DATA_FILE + ": page " + which + " is not marked as a meta page";
    }
    int version = page.getInt(META_AT + 4);
    if (version != DATA_VERSION) {
      return DATA_FILE + ": LMDB data format version " + version + ", this build reads " + DATA_VERSION;
    }
    return null;
  }

  /**
   * Moves the shard's files into a new sibling directory {@code shard-NN.damaged-<UTC time>},
   * which no shard or tool opens, so the operator keeps them for a post-mortem and the shard
   * starts empty. Returns where they went.
   */
  static Path setAside(Path shardDirectory, Instant now) throws IOException {
    Path aside = shardDirectory.resolveSibling(shardDirectory.getFileName() + ".damaged-" + STAMP.format(now));
    for (int n = 1; Files.exists(aside); n++) {
      aside = shardDirectory.resolveSibling(shardDirectory.getFileName() + ".damaged-" + STAMP.format(now) + "-" + n);
    }
    Files.createDirectory(aside);
    try (Stream<Path> files = Files.list(shardDirectory)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.move(f, aside.resolve(f.getFileName()), StandardCopyOption.ATOMIC_MOVE);
      }
    }
    return aside;
  }
}

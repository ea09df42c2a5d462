package io.shoal.cache.lmdb;

import static java.nio.ByteOrder.BIG_ENDIAN;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Properties;

/**
 * The on-disk format of an LMDB answer cache, in one place for the node, the offline tools and
 * the tests: the directory's layout file, the shard directories, the two databases of a shard,
 * their keys and their values.
 *
 * <ul>
 *   <li>{@code answers}: cache key (wire name, lower case; type; class; flags) to the value that
 *       {@link CachedAnswer#encode} writes, which starts with the 8-byte big-endian expires-at.
 *   <li>{@code expiry}: 8-byte big-endian expires-at, then the cache key; empty value. Sorted by
 *       expiry, so its first entry is the one {@code evict_one} removes.
 * </ul>
 */
final class AnswerCodec {
  /** Database names; they also mark a directory as a shoal cache shard for offline tools. */
  static final String ANSWERS = "answers";
  static final String EXPIRY = "expiry";

  /** Written at {@code path}: the shard layout, so a changed shard_count is noticed at open. */
  static final String LAYOUT_FILE = "shoal-cache.properties";
  static final String LAYOUT_FORMAT = "1";
  static final String KEY_HASH = "crc32";

  /** LMDB's default maximum key size is 511 bytes; a cache key is at most 260. */
  static final int KEY_CAPACITY = 512;
  /** Expires-at, stored-at, OPT start and end, TTL-offset count. */
  static final int VALUE_HEADER = 8 + 8 + 4 + 4 + 2;
  private static final int DNS_HEADER = 12;

  private AnswerCodec() {}

  /**
   * The shard that owns {@code key}: CRC-32 of the key bytes, modulo the shard count. CRC-32 is
   * fixed by its polynomial, so every process, before and after a restart, agrees on where a key
   * lives; the layout file records the hash so a future change cannot go unnoticed.
   */
  static int shardOf(CacheKey key, int shardCount) {
    return (int) (key.crc32() % shardCount);
  }

  static Path shardDirectory(Path path, int shard) {
    return path.resolve(String.format("shard-%02d", shard));
  }

  /** Whether {@code name} is a shard directory's name ({@code shard-NN}). */
  static boolean isShardDirectory(String name) {
    return name.matches("shard-\\d{2,9}");
  }

  // ---- the layout file ----

  static Properties layout(int shardCount) {
    Properties p = new Properties();
    p.setProperty("format", LAYOUT_FORMAT);
    p.setProperty("shard_count", String.valueOf(shardCount));
    p.setProperty("key_hash", KEY_HASH);
    return p;
  }

  static Properties readLayout(Path file) throws IOException {
    Properties have = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1)) {
      have.load(r);
    }
    return have;
  }

  static void writeLayout(Path file, Properties layout) throws IOException {
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.ISO_8859_1)) {
      layout.store(w, "shoal LMDB answer cache layout; do not edit");
    }
  }

  // ---- values ----

  /** The expires-at (epoch ms) a stored value starts with; the buffer's position is left alone. */
  static long expiresAt(ByteBuffer value) {
    return value.order(BIG_ENDIAN).getLong(value.position());
  }

  /** The stored-at (epoch ms) that follows the expires-at; the buffer's position is left alone. */
  static long storedAt(ByteBuffer value) {
    return value.order(BIG_ENDIAN).getLong(value.position() + 8);
  }

  /** {@code answer} encoded into {@code reuse}, or into a larger buffer when it does not fit. */
  static ByteBuffer encode(CachedAnswer answer, ByteBuffer reuse) {
    int size = answer.encodedSize();
    ByteBuffer out = reuse.capacity() >= size ? reuse : ByteBuffer.allocateDirect(Integer.highestOneBit(size - 1) << 1);
    out.clear();
    answer.encode(out);
    return out.flip();
  }

  /**
   * Decodes a value that may be damaged (the offline tools): null when it is too short for its
   * own header. The node reads only values it wrote, with {@link CachedAnswer#decode}.
   */
  static CachedAnswer decodeChecked(ByteBuffer value) {
    ByteBuffer v = value.duplicate().order(BIG_ENDIAN);
    if (v.remaining() < VALUE_HEADER) {
      return null;
    }
    int offsets = v.getShort(v.position() + VALUE_HEADER - 2) & 0xFFFF;
    if (v.remaining() < VALUE_HEADER + 2 * offsets + DNS_HEADER) {
      return null;
    }
    try {
      return CachedAnswer.decode(v);
    } catch (BufferUnderflowException e) {
      return null;
    }
  }

  // ---- keys ----

  /** The expiry-index key for {@code key}, written into {@code into} (capacity KEY_CAPACITY + 8). */
  static ByteBuffer indexKey(ByteBuffer into, long expiresAt, byte[] key) {
    into.clear();
    into.order(BIG_ENDIAN).putLong(expiresAt).put(key).flip();
    return into;
  }

  /** The wire form of a presentation name, lower-cased as keys are. */
  static byte[] nameWire(String name) {
    CacheKey k = CacheKey.of(name, 1, 1, 0);
    return Arrays.copyOf(k.bytes(), k.nameLength());
  }

  /** The query type of a key whose name is {@code nameLength} bytes. */
  static int keyType(byte[] key, int nameLength) {
    return ((key[nameLength] & 0xFF) << 8) | (key[nameLength + 1] & 0xFF);
  }

  /** The key if it is a well-formed, lower-cased cache key, else null. */
  static CacheKey parseKey(byte[] key) {
    if (key.length < 6 || key.length > 255 + 5) {
      return null;
    }
    int end = key.length - 5;
    int pos = 0;
    while (true) {
      if (pos >= end) {
        return null;
      }
      int len = key[pos] & 0xFF;
      if (len == 0) {
        break;
      }
      if (len > 63 || pos + 1 + len >= end) {
        return null;
      }
      for (int i = pos + 1; i <= pos + len; i++) {
        // A key with upper case would never be looked up: keys are lower-cased on the way in.
        if (key[i] >= 'A' && key[i] <= 'Z') {
          return null;
        }
      }
      pos += len + 1;
    }
    return pos == end - 1 ? CacheKey.ofBytes(key) : null;
  }

  // ---- buffers ----

  static ByteBuffer copyInto(ByteBuffer buffer, byte[] bytes) {
    buffer.clear();
    buffer.put(bytes).flip();
    return buffer;
  }

  static ByteBuffer direct(byte[] bytes) {
    return copyInto(ByteBuffer.allocateDirect(bytes.length), bytes);
  }

  /** The remaining bytes of {@code b}, copied; its position is left alone. */
  static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  /** Whether {@code key}'s remaining bytes begin with {@code prefix}. */
  static boolean startsWith(ByteBuffer key, byte[] prefix) {
    if (key.remaining() < prefix.length) {
      return false;
    }
    int base = key.position();
    for (int i = 0; i < prefix.length; i++) {
      if (key.get(base + i) != prefix[i]) {
        return false;
      }
    }
    return true;
  }
}

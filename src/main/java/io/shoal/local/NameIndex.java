package io.shoal.local;

import java.util.Arrays;

/**
 * Lower-case wire-form names mapped to int values, built once and then only read: a look-up hashes
 * a name straight from a packet's bytes (letter case folded) and probes an open-addressing table,
 * allocating nothing. Each entry costs its wire name plus 4 bytes in one byte pool and a long slot
 * (32 bits of hash to skip most byte compares, 32 bits of pool offset) at most 3/4 full, which is
 * what lets a list of a million names fit in tens of megabytes.
 */
public final class NameIndex {
  /** An index with no names. */
  public static final NameIndex EMPTY = new Builder().build();

  private static final int MAX_NAME = 255;
  /** Filter bits per name: with 3 bits set in one 64-bit word, about 1 name in 300 not held gets past. */
  private static final int FILTER_BITS = 16;

  private final byte[] pool;
  private final long[] slots;
  private final int mask;
  private final int size;
  /**
   * A blocked Bloom filter in front of the slots: 2 bytes a name, so a million names' filter (2
   * MiB) stays in the CPU's cache where the slots (16 MiB) do not, and a name not held, the
   * common case, is mostly turned away without a trip to memory.
   */
  private final long[] filter;
  private final int filterMask;

  private NameIndex(byte[] pool, long[] slots, int size) {
    this.pool = pool;
    this.slots = slots;
    this.mask = slots.length - 1;
    this.size = size;
    int words = Math.max(1, Integer.highestOneBit(Math.max(1, size * FILTER_BITS / 64 - 1)) << 1);
    this.filter = new long[words];
    this.filterMask = words - 1;
    for (long slot : slots) {
      if (slot != 0) {
        long g = filterHash(mix(hash(pool, (int) slot - 1)));
        filter[(int) (g >>> 32) & filterMask] |= filterBits(g);
      }
    }
  }

  private static long filterHash(long mixed) {
    return mixed * 0x9E3779B97F4A7C15L;
  }

  private static long filterBits(long g) {
    return (1L << g) | (1L << (g >>> 6)) | (1L << (g >>> 12));
  }

  /** Names held. */
  public int size() {
    return size;
  }

  /** Bytes held in the pool and the slot table. */
  public long bytes() {
    return pool.length + 8L * slots.length + 8L * filter.length;
  }

  /**
   * The value of the uncompressed wire name at {@code off} in {@code b} (any letter case), or -1.
   * The name must be well formed (the question of a parsed query is).
   */
  public int get(byte[] b, int off) {
    return get(hash(b, off), b, off);
  }

  /**
   * {@link #get(byte[], int)} with the name's {@link #hash} already known: a walk over a name's
   * suffixes from the root up (see {@link #extend}) hashes each byte once, not once per suffix.
   */
  public int get(long hash, byte[] b, int off) {
    return find(hash, b, off, false);
  }

  /** The value of the wildcard name {@code *.NAME}, NAME at {@code off} in {@code b}, whose hash is {@code hash}; or -1. */
  public int getWildcard(long hash, byte[] b, int off) {
    return find(hash, b, off, true);
  }

  private int find(long hash, byte[] b, int off, boolean wildcard) {
    long h = mix(hash);
    long g = filterHash(h);
    long bits = filterBits(g);
    if ((filter[(int) (g >>> 32) & filterMask] & bits) != bits) {
      return -1;
    }
    long tag = h & 0xFFFFFFFF00000000L;
    int i = (int) h & mask;
    while (true) {
      long slot = slots[i];
      if (slot == 0) {
        return -1;
      }
      if ((slot & 0xFFFFFFFF00000000L) == tag) {
        int at = (int) slot - 1;
        int end = -1;
        if (!wildcard) {
          end = sameName(b, off, pool, at);
        } else if (pool[at] == 1 && pool[at + 1] == '*') {
          end = sameName(b, off, pool, at + 2);
        }
        if (end >= 0) {
          return readInt(pool, end);
        }
      }
      i = (i + 1) & mask;
    }
  }

  /** Whether {@code b} at {@code off} spells the lower-case name at {@code at} in {@code pool}; its end there, or -1. */
  private static int sameName(byte[] b, int off, byte[] pool, int at) {
    int p = off;
    int q = at;
    while (true) {
      int len = pool[q] & 0xFF;
      if ((b[p] & 0xFF) != len) {
        return -1;
      }
      if (len == 0) {
        return q + 1;
      }
      for (int k = 1; k <= len; k++) {
        if (lower(b[p + k]) != pool[q + k]) {
          return -1;
        }
      }
      p += len + 1;
      q += len + 1;
    }
  }

  /** The hash of the root name, where a walk up a name's labels starts. */
  public static final long ROOT = 0xCBF29CE484222325L;
  private static final long PRIME = 0x100000001B3L;

  /**
   * The hash of the name made of the label at {@code at} in {@code b} followed by the name whose
   * hash is {@code rest} (letter case folded): hashes are built from the root up, so every suffix
   * of a name is hashed in one pass over its bytes.
   */
  public static long extend(long rest, byte[] b, int at) {
    int len = b[at] & 0xFF;
    long h = (rest ^ len) * PRIME;
    int end = at + len;
    for (int k = at + 1; k <= end; k++) {
      h = (h ^ lower(b[k])) * PRIME;
    }
    return h;
  }

  /** The hash of {@code *.NAME} from the hash of NAME. */
  public static long wildcard(long name) {
    return (((name ^ 1) * PRIME) ^ '*') * PRIME;
  }

  /** The hash of the wire name at {@code off}: {@link #extend} from {@link #ROOT}, label by label, last label first. */
  public static long hash(byte[] b, int off) {
    int labels = labels(b, off);
    long h = ROOT;
    for (int j = labels - 1; j >= 0; j--) {
      h = extend(h, b, labelAt(b, off, j));
    }
    return h;
  }

  /** Offset of label {@code j} (0: the first) of the wire name at {@code off}. */
  public static int labelAt(byte[] b, int off, int j) {
    int at = off;
    for (int k = 0; k < j; k++) {
      at += (b[at] & 0xFF) + 1;
    }
    return at;
  }

  /** Labels of the wire name at {@code off}, the root not counted. */
  public static int labels(byte[] b, int off) {
    int labels = 0;
    for (int pos = off; b[pos] != 0; pos += (b[pos] & 0xFF) + 1) {
      labels++;
    }
    return labels;
  }

  private static long mix(long h) {
    h ^= h >>> 29;
    h *= 0xBF58476D1CE4E5B9L;
    return h ^ (h >>> 32);
  }

  static byte lower(byte c) {
    return c >= 'A' && c <= 'Z' ? (byte) (c + 32) : c;
  }

  private static int readInt(byte[] b, int off) {
    return ((b[off] & 0xFF) << 24) | ((b[off + 1] & 0xFF) << 16) | ((b[off + 2] & 0xFF) << 8) | (b[off + 3] & 0xFF);
  }

  /** Wire length of the name at {@code off}. */
  static int nameLength(byte[] b, int off) {
    int pos = off;
    while (b[pos] != 0) {
      pos += (b[pos] & 0xFF) + 1;
    }
    return pos - off + 1;
  }

  /** Collects names; the first value given for a name is the one kept. Not thread-safe. */
  public static final class Builder {
    private byte[] pool = new byte[1024];
    private int used;
    private long[] slots = new long[16];
    private int size;

    /**
     * Adds the wire name at {@code off} in {@code src} (folded to lower case here) with {@code
     * value}, unless it is already there.
     *
     * @return the value the name now has: {@code value}, or the one it had
     */
    public int putIfAbsent(byte[] src, int off, int value) {
      if (value < 0) {
        throw new IllegalArgumentException("negative value");
      }
      long h = mix(hash(src, off));
      long tag = h & 0xFFFFFFFF00000000L;
      int mask = slots.length - 1;
      int i = (int) h & mask;
      while (slots[i] != 0) {
        long slot = slots[i];
        if ((slot & 0xFFFFFFFF00000000L) == tag) {
          int end = sameName(src, off, pool, (int) slot - 1);
          if (end >= 0) {
            return readInt(pool, end);
          }
        }
        i = (i + 1) & mask;
      }
      int len = nameLength(src, off);
      if (len > MAX_NAME) {
        throw new IllegalArgumentException("name longer than 255 octets");
      }
      if (used + len + 4 > pool.length) {
        long grown = Math.max((long) pool.length * 2, (long) used + len + 4);
        if (grown > Integer.MAX_VALUE - 8) {
          throw new IllegalStateException("name pool over 2 GiB");
        }
        pool = Arrays.copyOf(pool, (int) grown);
      }
      int at = used;
      for (int k = 0; k < len; k++) {
        pool[at + k] = lower(src[off + k]);
      }
      pool[at + len] = (byte) (value >>> 24);
      pool[at + len + 1] = (byte) (value >>> 16);
      pool[at + len + 2] = (byte) (value >>> 8);
      pool[at + len + 3] = (byte) value;
      used += len + 4;
      slots[i] = tag | (at + 1L);
      size++;
      if (size * 4L > slots.length * 3L) {
        grow();
      }
      return value;
    }

    private void grow() {
      long[] old = slots;
      slots = new long[old.length * 2];
      int mask = slots.length - 1;
      for (long slot : old) {
        if (slot != 0) {
          int i = (int) mix(hash(pool, (int) slot - 1)) & mask;
          while (slots[i] != 0) {
            i = (i + 1) & mask;
          }
          slots[i] = slot;
        }
      }
    }

    /** Names added so far. */
    public int size() {
      return size;
    }

    /** The index of the names added; the builder must not be used after. */
    public NameIndex build() {
      return new NameIndex(Arrays.copyOf(pool, used), slots, size);
    }
  }
}

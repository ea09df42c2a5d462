package io.shoal.wire;

/**
 * CRC-32 with the polynomial of {@link java.util.zip.CRC32}, for cache keys ({@link
 * CacheKey#crc32}): fixed by its polynomial, so every process, before and after a restart,
 * computes the same value for the same key.
 */
final class Crc32 {

  /**
   * CRC-32 tables (the polynomial of {@link java.util.zip.CRC32}) for slicing by 4: table 0 is the
   * classic byte-at-a-time table, table k the CRC of a byte followed by k zero bytes.
   */
  private static final int[][] TABLES = new int[4][256];

  static {
    for (int n = 0; n < 256; n++) {
      int c = n;
      for (int k = 0; k < 8; k++) {
        c = (c & 1) != 0 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
      }
      TABLES[0][n] = c;
    }
    for (int n = 0; n < 256; n++) {
      for (int t = 1; t < 4; t++) {
        int prev = TABLES[t - 1][n];
        TABLES[t][n] = TABLES[0][prev & 0xFF] ^ (prev >>> 8);
      }
    }
  }

  private Crc32() {}

  /**
   * The CRC-32 of {@code bytes}, equal to {@link java.util.zip.CRC32}'s. Computed here because
   * for a cache key (some 20 to 40 bytes) the JDK's vectorised intrinsic spends most of its time
   * setting up, and a byte at a time was still a sixth of an LMDB hit: four bytes per step (four
   * independent table reads instead of a chain of four) cut that to about a quarter.
   */
  static long of(byte[] bytes) {
    int[] t0 = TABLES[0];
    int[] t1 = TABLES[1];
    int[] t2 = TABLES[2];
    int[] t3 = TABLES[3];
    int c = 0xFFFFFFFF;
    int i = 0;
    int n = bytes.length;
    for (; i + 4 <= n; i += 4) {
      c ^= (bytes[i] & 0xFF) | (bytes[i + 1] & 0xFF) << 8 | (bytes[i + 2] & 0xFF) << 16 | (bytes[i + 3] & 0xFF) << 24;
      c = t3[c & 0xFF] ^ t2[(c >>> 8) & 0xFF] ^ t1[(c >>> 16) & 0xFF] ^ t0[c >>> 24];
    }
    for (; i < n; i++) {
      c = t0[(c ^ bytes[i]) & 0xFF] ^ (c >>> 8);
    }
    return ~c & 0xFFFFFFFFL;
  }
}

package io.shoal.wire;

/** Big-endian field access and name skipping over raw DNS messages (RFC 1035 section 4). */
final class Wire {
  static final int HEADER = 12;
  static final int TYPE_SOA = 6;
  static final int TYPE_OPT = 41;
  static final int TYPE_TXT = 16;
  static final int CLASS_CH = 3;
  /** A name has at most 127 labels, so a legal name never needs more pointer jumps than that. */
  private static final int MAX_POINTERS = 127;

  private Wire() {}

  static int u16(byte[] b, int off) {
    return ((b[off] & 0xFF) << 8) | (b[off + 1] & 0xFF);
  }

  static long u32(byte[] b, int off) {
    return ((long) (b[off] & 0xFF) << 24)
        | ((b[off + 1] & 0xFF) << 16)
        | ((b[off + 2] & 0xFF) << 8)
        | (b[off + 3] & 0xFF);
  }

  static void put16(byte[] b, int off, int v) {
    b[off] = (byte) (v >>> 8);
    b[off + 1] = (byte) v;
  }

  static void put32(byte[] b, int off, long v) {
    b[off] = (byte) (v >>> 24);
    b[off + 1] = (byte) (v >>> 16);
    b[off + 2] = (byte) (v >>> 8);
    b[off + 3] = (byte) v;
  }

  /**
   * Validates the (possibly compressed) name at {@code off} by following it to its end, and
   * returns the offset just past it in place. Every pointer must point strictly backwards (so
   * no loop is possible, as dnsjava and Knot also require) and past the header; the name, with
   * what its pointers lead to, is at most 255 octets.
   *
   * @throws WireException if the name is cut short, loops, points outside the message, uses a
   *     reserved label type or is too long
   */
  static int checkName(byte[] b, int off, int end) throws WireException {
    int pos = off;
    int after = -1;
    int length = 0;
    int jumps = 0;
    while (true) {
      if (pos >= end) {
        throw new WireException("name runs past the end of the message");
      }
      int len = b[pos] & 0xFF;
      int kind = len & 0xC0;
      if (kind == 0xC0) {
        if (pos + 2 > end) {
          throw new WireException("compression pointer runs past the end of the message");
        }
        int target = ((len & 0x3F) << 8) | (b[pos + 1] & 0xFF);
        if (target >= pos || target < HEADER) {
          throw new WireException("compression pointer at " + pos + " to " + target + " does not point back");
        }
        if (++jumps > MAX_POINTERS) {
          throw new WireException("too many compression pointers in one name");
        }
        if (after < 0) {
          after = pos + 2;
        }
        pos = target;
        continue;
      }
      if (kind != 0) {
        throw new WireException("reserved label type");
      }
      if (len == 0) {
        return after < 0 ? pos + 1 : after;
      }
      length += len + 1;
      if (length + 1 > 255) {
        throw new WireException("name longer than 255 octets");
      }
      pos += len + 1;
    }
  }

  static boolean equalsIgnoreCase(byte[] a, int aOff, byte[] b, int bOff, int len) {
    for (int i = 0; i < len; i++) {
      if (lower(a[aOff + i]) != lower(b[bOff + i])) {
        return false;
      }
    }
    return true;
  }

  static byte lower(byte c) {
    return c >= 'A' && c <= 'Z' ? (byte) (c + 32) : c;
  }
}

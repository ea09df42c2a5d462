package io.shoal.wire;

/**
 * The cheap half of validating an upstream answer: proves, in one walk over raw bytes, that every
 * compression pointer (in the question, the owner names and the names inside the RDATA of the
 * types that carry them) leads to the start of a label that was already read as part of a name.
 * Such an answer can be cached as it is: no pointer leads into a TTL or other data that shoal
 * patches on the way out. Anything this walk does not know (a type whose RDATA might hold a name
 * it does not parse, a pointer elsewhere) is left to the full check, which rewrites the answer.
 * Types it knows: A, AAAA, TXT, and NS, CNAME, SOA, PTR, MX, SRV, DNAME with their names; and the
 * DNSSEC records every signed answer to a DO query carries (RRSIG, NSEC, NSEC3, DS, DNSKEY,
 * NSEC3PARAM) in the shape dnsjava would write them again: the names inside RRSIG and NSEC data
 * uncompressed (RFC 4034 forbids compressing them; dnsjava writes them so), type bitmaps in
 * increasing windows of 1 to 32 octets.
 */
final class PointerCheck {
  private static final int TYPE_A = 1;
  private static final int TYPE_NS = 2;
  private static final int TYPE_CNAME = 5;
  private static final int TYPE_SOA = 6;
  private static final int TYPE_PTR = 12;
  private static final int TYPE_MX = 15;
  private static final int TYPE_TXT = 16;
  private static final int TYPE_AAAA = 28;
  private static final int TYPE_SRV = 33;
  private static final int TYPE_DNAME = 39;
  private static final int TYPE_DS = 43;
  private static final int TYPE_RRSIG = 46;
  private static final int TYPE_NSEC = 47;
  private static final int TYPE_DNSKEY = 48;
  private static final int TYPE_NSEC3 = 50;
  private static final int TYPE_NSEC3PARAM = 51;
  /** RRSIG data before the signer's name: type covered, algorithm, labels, TTL, two times, key tag. */
  private static final int RRSIG_FIXED = 18;

  private PointerCheck() {}

  /**
   * True when {@code wire} (already walked by {@link ScannedAnswer#scan}, without an OPT record)
   * has only pointers to label starts and only record types whose names are understood here.
   */
  static boolean pointsOnlyToNames(byte[] wire) {
    int len = wire.length;
    byte[] suffix = new byte[len];
    int pos = Wire.HEADER;
    int records = Wire.u16(wire, 6) + Wire.u16(wire, 8) + Wire.u16(wire, 10);
    pos = name(wire, pos, len, suffix);
    if (pos < 0 || pos + 4 > len) {
      return false;
    }
    pos += 4;
    for (int i = 0; i < records; i++) {
      pos = name(wire, pos, len, suffix);
      if (pos < 0 || pos + 10 > len) {
        return false;
      }
      int type = Wire.u16(wire, pos);
      int rdata = pos + 10;
      int end = rdata + Wire.u16(wire, pos + 8);
      if (end > len || !rdata(wire, type, rdata, end, suffix)) {
        return false;
      }
      pos = end;
    }
    return pos == len;
  }

  /**
   * Checks one record's data: its names, or its exact shape for A, AAAA and TXT; false for any
   * other type, which the full check parses.
   */
  private static boolean rdata(byte[] wire, int type, int start, int end, byte[] suffix) {
    switch (type) {
      case TYPE_NS, TYPE_CNAME, TYPE_PTR, TYPE_DNAME:
        return name(wire, start, end, suffix) == end;
      case TYPE_MX:
        return start + 2 < end && name(wire, start + 2, end, suffix) == end;
      case TYPE_SRV:
        return start + 6 < end && name(wire, start + 6, end, suffix) == end;
      case TYPE_SOA: {
        int next = name(wire, start, end, suffix);
        next = next < 0 ? -1 : name(wire, next, end, suffix);
        return next >= 0 && next + 20 == end;
      }
      case TYPE_A:
        return end - start == 4;
      case TYPE_AAAA:
        return end - start == 16;
      case TYPE_TXT:
        return strings(wire, start, end);
      case TYPE_DS, TYPE_DNSKEY:
        // Key tag or flags, protocol or algorithm, digest type or algorithm, then opaque bytes.
        return end - start >= 4;
      case TYPE_RRSIG: {
        int signer = start + RRSIG_FIXED;
        return signer < end && uncompressedName(wire, signer, end, suffix) >= 0;
      }
      case TYPE_NSEC: {
        int next = uncompressedName(wire, start, end, suffix);
        return next >= 0 && bitmaps(wire, next, end);
      }
      case TYPE_NSEC3: {
        // hash algorithm, flags, iterations, salt length and salt, hash length and hash, bitmaps
        int hash = start + 5 + (start + 4 < end ? wire[start + 4] & 0xFF : 0);
        if (start + 5 > end || hash >= end || (wire[hash] & 0xFF) == 0) {
          return false;
        }
        int types = hash + 1 + (wire[hash] & 0xFF);
        return types <= end && bitmaps(wire, types, end);
      }
      case TYPE_NSEC3PARAM:
        return start + 5 <= end && start + 5 + (wire[start + 4] & 0xFF) == end;
      default:
        // Anything else (SVCB, CAA...) is parsed in full by the other check.
        return false;
    }
  }

  /**
   * A name inside DNSSEC data, which is never compressed: as {@link #name}, or -1 when it holds a
   * pointer (such an answer goes to the full check, which writes the name out).
   */
  private static int uncompressedName(byte[] wire, int off, int end, byte[] suffix) {
    int pos = off;
    while (pos < end) {
      int len = wire[pos] & 0xFF;
      if (len == 0) {
        return name(wire, off, end, suffix);
      }
      if ((len & 0xC0) != 0) {
        return -1;
      }
      pos += len + 1;
    }
    return -1;
  }

  /** NSEC and NSEC3 type bitmaps (RFC 4034 section 4.1.2): windows in increasing order, each of 1 to 32 octets, filling the data exactly. */
  private static boolean bitmaps(byte[] wire, int start, int end) {
    int pos = start;
    int window = -1;
    while (pos < end) {
      if (pos + 2 > end) {
        return false;
      }
      int w = wire[pos] & 0xFF;
      int len = wire[pos + 1] & 0xFF;
      if (w <= window || len < 1 || len > 32) {
        return false;
      }
      window = w;
      pos += 2 + len;
    }
    return pos == end;
  }

  /** TXT data: one or more length-prefixed strings that fill it exactly. */
  private static boolean strings(byte[] wire, int start, int end) {
    int pos = start;
    while (pos < end) {
      pos += 1 + (wire[pos] & 0xFF);
    }
    return pos == end && end > start;
  }

  /**
   * Walks one name from {@code off}; returns the offset after it, or -1 when the name is bad or a
   * pointer leads anywhere but the start of a label of a name read before (so never into other
   * data, never into the name itself). Once the name is complete, records in {@code suffix}, at
   * each offset where one of its labels starts, the length in octets of the name from that label
   * to its end (1 to 255, as an unsigned byte; 0 where no label starts): one byte per octet of the
   * answer is all a check allocates.
   */
  private static int name(byte[] wire, int off, int end, byte[] suffix) {
    int pos = off;
    int length = 0;
    int tail;
    int after;
    while (true) {
      if (pos >= end || length > 255) {
        return -1;
      }
      int len = wire[pos] & 0xFF;
      if ((len & 0xC0) == 0xC0) {
        if (pos + 2 > end) {
          return -1;
        }
        int target = ((len & 0x3F) << 8) | (wire[pos + 1] & 0xFF);
        if (target >= pos || suffix[target] == 0) {
          return -1;
        }
        tail = suffix[target] & 0xFF;
        after = pos + 2;
        break;
      }
      if ((len & 0xC0) != 0) {
        return -1;
      }
      if (len == 0) {
        suffix[pos] = 1;
        tail = 1;
        after = pos + 1;
        break;
      }
      length += len + 1;
      pos += len + 1;
    }
    int total = length + tail;
    if (total > 255) {
      return -1;
    }
    // The labels before the pointer or the root sit back to back from off.
    for (int at = off; at < off + length; at += (wire[at] & 0xFF) + 1) {
      suffix[at] = (byte) (total - (at - off));
    }
    return after;
  }
}

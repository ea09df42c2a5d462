package io.shoal.wire;

import java.util.Arrays;

/**
 * An upstream response walked once, record by record, to find what caching needs: where every
 * TTL field sits (the OPT pseudo-record's TTL field holds EDNS flags and is left out), the
 * smallest TTL, the SOA of a negative answer (RFC 2308), and the OPT record's extent.
 */
public record ScannedAnswer(
    byte[] wire,
    int rcode,
    boolean truncated,
    int answerCount,
    int[] ttlOffsets,
    long minTtl,
    long soaTtl,
    long soaMinimum,
    int optStart,
    int optEnd) {

  /** Walks {@code wire}; throws if any record runs past the end. */
  public static ScannedAnswer scan(byte[] wire) throws WireException {
    int len = wire.length;
    if (len < Wire.HEADER) {
      throw new WireException("response shorter than a DNS header");
    }
    int rcode = wire[3] & 0x0F;
    boolean truncated = (wire[2] & 0x02) != 0;
    int qd = Wire.u16(wire, 4);
    int an = Wire.u16(wire, 6);
    int ns = Wire.u16(wire, 8);
    int ar = Wire.u16(wire, 10);
    int pos = Wire.HEADER;
    for (int i = 0; i < qd; i++) {
      pos = Wire.skipName(wire, pos, len) + 4;
      if (pos > len) {
        throw new WireException("question runs past the end of the response");
      }
    }
    int total = an + ns + ar;
    int[] offsets = new int[total];
    int count = 0;
    long minTtl = Long.MAX_VALUE;
    long soaTtl = -1;
    long soaMin = -1;
    int optStart = -1;
    int optEnd = -1;
    for (int i = 0; i < total; i++) {
      int owner = pos;
      pos = Wire.skipName(wire, pos, len);
      if (pos + 10 > len) {
        throw new WireException("record header runs past the end of the response");
      }
      int type = Wire.u16(wire, pos);
      long ttl = Wire.u32(wire, pos + 4);
      int rdlen = Wire.u16(wire, pos + 8);
      int end = pos + 10 + rdlen;
      if (end > len) {
        throw new WireException("record data runs past the end of the response");
      }
      if (type == Wire.TYPE_OPT) {
        optStart = owner;
        optEnd = end;
      } else {
        // RFC 2181 section 8: a TTL with the top bit set is treated as zero.
        long effective = ttl > 0x7FFFFFFFL ? 0 : ttl;
        offsets[count++] = pos + 4;
        minTtl = Math.min(minTtl, effective);
        if (type == Wire.TYPE_SOA && i >= an && i < an + ns && rdlen >= 20) {
          soaTtl = effective;
          soaMin = Wire.u32(wire, end - 4);
        }
      }
      pos = end;
    }
    return new ScannedAnswer(
        wire, rcode, truncated, an, Arrays.copyOf(offsets, count),
        minTtl == Long.MAX_VALUE ? 0 : minTtl, soaTtl, soaMin, optStart, optEnd);
  }

  /** NXDOMAIN, or NOERROR with no answer records (NODATA). */
  public boolean negative() {
    return rcode == Rcode.NXDOMAIN || (rcode == Rcode.NOERROR && answerCount == 0);
  }

  /**
   * True when {@code response} answers the question of {@code key} under {@code id}: QR set, the
   * same ID, one question with the same name (any case), type and class. Anything else on an
   * upstream socket is a stray or a spoofing attempt.
   */
  public static boolean answers(byte[] response, int length, int id, CacheKey key) {
    if (length < Wire.HEADER || Wire.u16(response, 0) != id || (response[2] & 0x80) == 0) {
      return false;
    }
    if (Wire.u16(response, 4) != 1) {
      return false;
    }
    byte[] k = key.bytes();
    int questionLen = key.nameLength() + 4;
    if (Wire.HEADER + questionLen > length) {
      return false;
    }
    return Wire.equalsIgnoreCase(response, Wire.HEADER, k, 0, key.nameLength())
        && Wire.u16(response, Wire.HEADER + key.nameLength()) == key.qtype()
        && Wire.u16(response, Wire.HEADER + key.nameLength() + 2) == key.qclass();
  }
}

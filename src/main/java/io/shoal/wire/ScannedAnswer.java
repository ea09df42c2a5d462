package io.shoal.wire;

import java.io.IOException;
import java.util.Arrays;
import org.xbill.DNS.Message;
import org.xbill.DNS.Section;

/**
 * An upstream response walked once, record by record, to find what caching needs: where every
 * TTL field sits (the OPT pseudo-record's TTL field holds EDNS flags and is left out), the
 * smallest TTL, the SOA of a negative answer (RFC 2308), and the OPT record's extent.
 * {@link #fromUpstream} also makes an upstream's answer fit to cache and forward.
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
    int optEnd,
    int end) {

  /**
   * Validates an upstream's answer and makes it what shoal caches and forwards: every name
   * checked (compression pointers must point back, so loops are impossible), counts and record
   * bounds checked, one question, the upstream's OPT removed (EDNS is per hop, RFC 6891 section
   * 6.1.1: its options, UDP size and flags are not for our clients), and TTLs with the top bit set
   * made 0 (RFC 2181 section 8). An answer whose OPT is last (or absent) and whose every pointer
   * leads to a name already read ({@link PointerCheck}) is kept as it is. Any other must parse
   * with dnsjava, which knows the RDATA
   * of every type, names inside RDATA included, and dnsjava writes it again, compressing afresh:
   * every pointer of the result leads to a name, never into a TTL or other data that shoal
   * patches on the way out, and nothing after the OPT or the last record is left to break.
   *
   * @throws WireException when the answer cannot be made valid; the client gets SERVFAIL
   */
  public static ScannedAnswer fromUpstream(byte[] response) throws WireException {
    ScannedAnswer raw = scan(response);
    if (Wire.u16(response, 4) != 1) {
      throw new WireException("answer with " + Wire.u16(response, 4) + " questions");
    }
    if (raw.optStart >= 0) {
      int extendedRcode = response[raw.optStart + 5] & 0xFF;
      if (extendedRcode != 0) {
        // The upper rcode bits (BADCOOKIE, BADVERS...) live in the OPT we must not forward.
        throw new WireException("extended rcode " + ((extendedRcode << 4) | raw.rcode) + " from upstream");
      }
    }
    byte[] withoutOpt = raw.withoutOpt();
    if ((raw.optStart < 0 || raw.optEnd == raw.end) && PointerCheck.pointsOnlyToNames(withoutOpt)) {
      // The common answer (OPT last or absent, every pointer to a name, types whose data is
      // understood): valid as it is, without the cost of parsing and writing it again.
      return zeroTopBitTtls(scan(withoutOpt));
    }
    Message parsed = dnsjavaParse(withoutOpt);
    if (parsed.getOPT() != null) {
      parsed.removeRecord(parsed.getOPT(), Section.ADDITIONAL);
    }
    byte[] wire = parsed.toWire();
    if (wire.length > 65535) {
      throw new WireException("answer of " + wire.length + " bytes once decompressed names are written again");
    }
    return zeroTopBitTtls(scan(wire));
  }

  /** RFC 2181 section 8: a TTL with the top bit set is zero, written so in the bytes we keep. */
  private static ScannedAnswer zeroTopBitTtls(ScannedAnswer clean) {
    for (int off : clean.ttlOffsets) {
      if (Wire.u32(clean.wire, off) > 0x7FFFFFFFL) {
        Wire.put32(clean.wire, off, 0);
      }
    }
    return clean;
  }

  /**
   * A stored answer from before OPT records were removed on the way in: the same answer made as
   * {@link #fromUpstream} makes them today.
   */
  public static ScannedAnswer withoutUpstreamOpt(byte[] stored) throws WireException {
    ScannedAnswer raw = scan(stored);
    if (raw.optStart < 0) {
      return raw;
    }
    return fromUpstream(stored);
  }

  /**
   * The wire bytes up to the last record, the OPT record cut out when it is the last one (so a
   * damaged option need not fail the answer); an OPT elsewhere is left for dnsjava to drop.
   */
  private byte[] withoutOpt() {
    if (optStart < 0 || optEnd < end) {
      return end == wire.length ? wire : Arrays.copyOf(wire, end);
    }
    byte[] out = Arrays.copyOf(wire, optStart);
    Wire.put16(out, 10, Wire.u16(out, 10) - 1);
    return out;
  }

  private static Message dnsjavaParse(byte[] wire) throws WireException {
    try {
      return new Message(wire);
    } catch (IOException | RuntimeException e) {
      throw new WireException("unreadable answer: " + e.getMessage());
    }
  }

  /**
   * A copy whose TTLs are each clamped to {@code [floor, ceiling]} seconds, for a cache that keeps
   * every record's own TTL within its limits.
   */
  public ScannedAnswer withTtlsWithin(long floor, long ceiling) {
    byte[] out = wire.clone();
    long min = Long.MAX_VALUE;
    for (int off : ttlOffsets) {
      long ttl = Wire.u32(out, off);
      ttl = Math.min(Math.max(ttl > 0x7FFFFFFFL ? 0 : ttl, floor), ceiling);
      Wire.put32(out, off, ttl);
      min = Math.min(min, ttl);
    }
    long soa = soaTtl < 0 ? soaTtl : Math.min(Math.max(soaTtl, floor), ceiling);
    return new ScannedAnswer(out, rcode, truncated, answerCount, ttlOffsets,
        min == Long.MAX_VALUE ? 0 : min, soa, soaMinimum, optStart, optEnd, end);
  }

  /** Walks {@code wire}, checking every owner name; throws if anything runs past the end. */
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
      pos = Wire.checkName(wire, pos, len) + 4;
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
      pos = Wire.checkName(wire, pos, len);
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
        if (optStart >= 0 || i < an + ns || wire[owner] != 0) {
          throw new WireException("misplaced or repeated OPT record");
        }
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
        wire, rcode, truncated, an, TtlOffsetShapes.of(offsets, count),
        minTtl == Long.MAX_VALUE ? 0 : minTtl, soaTtl, soaMin, optStart, optEnd, pos);
  }

  /**
   * Whether {@code response} says it is served stale: its OPT carries an Extended DNS Error of
   * code 3 (Stale Answer) or 19 (Stale NXDOMAIN Answer), RFC 8914, as a cluster owner's reply
   * does when its upstreams fail. False for a response that does not scan.
   */
  public static boolean saysStale(byte[] response) {
    ScannedAnswer raw;
    try {
      raw = scan(response);
    } catch (WireException e) {
      return false;
    }
    if (raw.optStart < 0) {
      return false;
    }
    int pos = raw.optStart + 11;
    while (pos + 4 <= raw.optEnd) {
      int code = Wire.u16(response, pos);
      int length = Wire.u16(response, pos + 2);
      if (code == ExtendedError.OPTION_CODE && length >= 2 && pos + 6 <= raw.optEnd) {
        int info = Wire.u16(response, pos + 4);
        if (info == ExtendedError.STALE_ANSWER.code() || info == ExtendedError.STALE_NXDOMAIN.code()) {
          return true;
        }
      }
      pos += 4 + length;
    }
    return false;
  }

  /**
   * NOERROR with answer records: each record keeps its own TTL. Any other answer (NXDOMAIN,
   * NODATA, a remembered SERVFAIL) is kept as a whole, its TTLs capped by how long.
   */
  public static boolean positive(byte[] wire) {
    return (wire[3] & 0x0F) == Rcode.NOERROR && Wire.u16(wire, 6) > 0;
  }

  /** NXDOMAIN, or NOERROR with no answer records (NODATA). */
  public boolean negative() {
    return rcode == Rcode.NXDOMAIN || (rcode == Rcode.NOERROR && answerCount == 0);
  }

  /**
   * Whether {@code response} is a response with one question, exactly {@code question} (name,
   * type and class, byte for byte: the letter case a query was sent with must come back).
   */
  public static boolean echoes(byte[] response, byte[] question) {
    int end = Wire.HEADER + question.length;
    return response.length >= end
        && (response[2] & 0x80) != 0
        && Wire.u16(response, 4) == 1
        && java.util.Arrays.equals(response, Wire.HEADER, end, question, 0, question.length);
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

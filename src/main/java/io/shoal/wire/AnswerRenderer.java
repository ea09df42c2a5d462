package io.shoal.wire;

/**
 * Turns a stored wire answer into the reply for one client without parsing it: copy the bytes,
 * write the client's ID, RD and CD bits (and AD only for a client that set DO or AD) and the exact letter case of its question name, count
 * every TTL down, add shoal's own OPT for an EDNS client, and truncate (TC=1) when the reply is
 * larger than the client can take over UDP. The stored answer holds no OPT: EDNS is per hop.
 */
public final class AnswerRenderer {
  private AnswerRenderer() {}

  /**
   * @param wire a stored answer without OPT record
   * @param elapsedSeconds seconds since the answer was stored; subtracted from every TTL
   * @param capSeconds no TTL in the reply exceeds this
   * @param sizeLimit the largest reply the client's transport takes
   */
  public static byte[] render(
      byte[] wire, int[] ttlOffsets, DnsQuery query, long elapsedSeconds, long capSeconds, int sizeLimit) {
    return render(wire, ttlOffsets, query, elapsedSeconds, capSeconds, sizeLimit, null);
  }

  /** As above, with {@code ede} (null: none) in the OPT of an EDNS client's reply. */
  public static byte[] render(
      byte[] wire, int[] ttlOffsets, DnsQuery query, long elapsedSeconds, long capSeconds, int sizeLimit,
      ExtendedError ede) {
    byte[] out = new byte[size(wire, query, ede)];
    int length = renderInto(wire, ttlOffsets, query, elapsedSeconds, capSeconds, sizeLimit, ede, out);
    return length == out.length ? out : java.util.Arrays.copyOf(out, length);
  }

  /** The size of the full (untruncated) reply {@link #renderInto} writes. */
  public static int size(byte[] wire, DnsQuery query, ExtendedError ede) {
    return wire.length + (query.edns() ? ErrorReply.optLength(ede) : 0);
  }

  /**
   * As {@link #render}, written into {@code out} (at least {@link #size} bytes) instead of a new
   * array, so a reader that sends from a buffer of its own allocates nothing for the reply.
   *
   * @return the reply's length in {@code out}
   */
  public static int renderInto(
      byte[] wire, int[] ttlOffsets, DnsQuery query, long elapsedSeconds, long capSeconds, int sizeLimit,
      ExtendedError ede, byte[] out) {
    System.arraycopy(wire, 0, out, 0, wire.length);
    int length = wire.length;
    if (query.edns()) {
      // RFC 6891 section 7: an OPT in every reply to a query with one; ours, with the client's DO.
      ErrorReply.writeOpt(out, wire.length, query.dnssecOk(), 0, ede);
      Wire.put16(out, 10, Wire.u16(out, 10) + 1);
      length += ErrorReply.optLength(ede);
    }
    byte[] packet = query.packet();
    out[0] = packet[0];
    out[1] = packet[1];
    // Echo RD; clear AA: a cached copy is not an authoritative answer. Set RA: we recurse.
    out[2] = (byte) ((out[2] & 0xFA) | (packet[2] & 0x01));
    // Echo CD (RFC 4035 section 3.1.6): the upstream need not have.
    out[3] = (byte) ((out[3] & 0x6F) | 0x80 | (packet[3] & 0x10));
    if (!query.dnssecOk() && !query.authenticData()) {
      // RFC 6840 section 5.8: AD only to a client that asked for it with DO or AD. One stored
      // answer serves both kinds of client (AD is not in the cache key).
      out[3] &= ~0x20;
    }
    // The stored question has the same name in lower case: overwrite it with the client's case.
    System.arraycopy(packet, Wire.HEADER, out, Wire.HEADER, query.nameEnd() - Wire.HEADER);
    for (int off : ttlOffsets) {
      long stored = Wire.u32(out, off);
      // RFC 2181 section 8, for answers stored before the way in made such TTLs 0.
      long ttl = Math.min(stored > 0x7FFFFFFFL ? 0 : stored, capSeconds) - elapsedSeconds;
      Wire.put32(out, off, Math.max(0, ttl));
    }
    if (length > sizeLimit) {
      return truncate(out, query);
    }
    return length;
  }

  /**
   * Cuts the reply in {@code out} down to header and question with TC=1, and OPT for an EDNS
   * client ("ask again over TCP"), in place; returns the new length.
   */
  private static int truncate(byte[] out, DnsQuery query) {
    int qEnd = query.questionEnd();
    out[2] |= 0x02;
    Wire.put16(out, 6, 0);
    Wire.put16(out, 8, 0);
    Wire.put16(out, 10, query.edns() ? 1 : 0);
    if (query.edns()) {
      ErrorReply.writeOpt(out, qEnd, query.dnssecOk());
      return qEnd + ErrorReply.OPT_LENGTH;
    }
    return qEnd;
  }

  /**
   * The rcode of a reply, for metrics: the header's 4 bits, or BADVERS when the reply is that
   * error (no records but shoal's 11-byte OPT, whose extended rcode is 1).
   */
  public static int rcode(byte[] reply) {
    return rcode(reply, reply.length);
  }

  /** {@link #rcode(byte[])} of the reply in the first {@code n} bytes of {@code reply}. */
  public static int rcode(byte[] reply, int n) {
    if (n < Wire.HEADER) {
      return Rcode.SERVFAIL;
    }
    int rcode = reply[3] & 0x0F;
    if (Wire.u16(reply, 6) == 0 && Wire.u16(reply, 8) == 0 && Wire.u16(reply, 10) == 1
        && n >= Wire.HEADER + ErrorReply.OPT_LENGTH && reply[n - 11] == 0 && Wire.u16(reply, n - 10) == Wire.TYPE_OPT
        && Wire.u16(reply, n - 2) == 0) {
      rcode |= (reply[n - 6] & 0xFF) << 4;
    }
    return rcode;
  }
}

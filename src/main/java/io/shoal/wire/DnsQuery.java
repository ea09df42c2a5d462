package io.shoal.wire;

/**
 * A client's query, validated from raw bytes without a full parse: header, the one question, and
 * the EDNS OPT record if present. Holds the original packet so replies can echo the ID and the
 * exact letter case of the name (0x20).
 */
public final class DnsQuery {
  /** The UDP payload size we advertise upstream and to EDNS clients (DNS flag day 2020). */
  public static final int EDNS_UDP_SIZE = 1232;

  private static final int MIN_UDP = 512;

  private final byte[] packet;
  private final int questionEnd;
  private final int qtype;
  private final int qclass;
  private final boolean edns;
  private final boolean dnssecOk;
  private final int udpLimit;
  private final CacheKey key;

  private DnsQuery(
      byte[] packet, int questionEnd, int qtype, int qclass, boolean edns, boolean dnssecOk,
      int udpLimit, CacheKey key) {
    this.packet = packet;
    this.questionEnd = questionEnd;
    this.qtype = qtype;
    this.qclass = qclass;
    this.edns = edns;
    this.dnssecOk = dnssecOk;
    this.udpLimit = udpLimit;
    this.key = key;
  }

  /**
   * Validates a packet received on a listening socket.
   *
   * @throws BadQuery with a drop reason when the header cannot be read or QR is set (never
   *     answer a response: that is how reflection loops start), or with an error reply
   *     (FORMERR, NOTIMP, REFUSED) when the header is readable but the query is not acceptable
   */
  public static DnsQuery parse(byte[] packet) throws BadQuery {
    int len = packet.length;
    if (len < Wire.HEADER) {
      throw BadQuery.drop("malformed", "packet shorter than a DNS header (" + len + " bytes)");
    }
    if ((packet[2] & 0x80) != 0) {
      throw BadQuery.drop("response", "QR bit set on a query socket");
    }
    int opcode = (packet[2] >> 3) & 0x0F;
    if (opcode != 0) {
      throw BadQuery.answer(
          "notimp", "opcode " + opcode, ErrorReply.headerOnly(packet, Rcode.NOTIMP), Rcode.NOTIMP);
    }
    int qdcount = Wire.u16(packet, 4);
    if (qdcount != 1) {
      throw formerr(packet, "QDCOUNT " + qdcount);
    }
    int nameEnd;
    try {
      nameEnd = questionNameEnd(packet, Wire.HEADER, len);
    } catch (WireException e) {
      throw formerr(packet, "question name: " + e.getMessage());
    }
    if (nameEnd + 4 > len) {
      throw formerr(packet, "question runs past the end of the packet");
    }
    int qtype = Wire.u16(packet, nameEnd);
    int qclass = Wire.u16(packet, nameEnd + 2);
    int questionEnd = nameEnd + 4;

    boolean edns = false;
    boolean dnssecOk = false;
    int udpLimit = MIN_UDP;
    int records = Wire.u16(packet, 6) + Wire.u16(packet, 8) + Wire.u16(packet, 10);
    int arStart = Wire.u16(packet, 6) + Wire.u16(packet, 8);
    int pos = questionEnd;
    try {
      for (int i = 0; i < records; i++) {
        int owner = pos;
        pos = Wire.skipName(packet, pos, len);
        if (pos + 10 > len) {
          throw new WireException("record header runs past the end of the packet");
        }
        int type = Wire.u16(packet, pos);
        int rdlen = Wire.u16(packet, pos + 8);
        if (type == Wire.TYPE_OPT) {
          if (edns || i < arStart || packet[owner] != 0) {
            throw new WireException("misplaced or repeated OPT record");
          }
          edns = true;
          udpLimit = Math.max(MIN_UDP, Wire.u16(packet, pos + 2));
          dnssecOk = (packet[pos + 6] & 0x80) != 0;
        }
        pos += 10 + rdlen;
        if (pos > len) {
          throw new WireException("record data runs past the end of the packet");
        }
      }
    } catch (WireException e) {
      throw formerr(packet, e.getMessage());
    }
    if (qtype == 251 || qtype == 252) {
      // Zone transfers are for authoritative servers, not a cache.
      throw BadQuery.answer(
          "refused", "zone transfer", ErrorReply.withQuestion(packet, questionEnd, Rcode.REFUSED, edns),
          Rcode.REFUSED);
    }
    boolean checkingDisabled = (packet[3] & 0x10) != 0;
    int flags = (dnssecOk ? CacheKey.FLAG_DO : 0) | (checkingDisabled ? CacheKey.FLAG_CD : 0);
    CacheKey key = CacheKey.of(packet, Wire.HEADER, nameEnd, qtype, qclass, flags);
    return new DnsQuery(packet, questionEnd, qtype, qclass, edns, dnssecOk, udpLimit, key);
  }

  private static BadQuery formerr(byte[] packet, String detail) {
    return BadQuery.answer(
        "formerr", detail, ErrorReply.headerOnly(packet, Rcode.FORMERR), Rcode.FORMERR);
  }

  /** The question name must be written out in full: a pointer here has nothing to point back to. */
  private static int questionNameEnd(byte[] b, int off, int end) throws WireException {
    int pos = off;
    while (true) {
      if (pos >= end) {
        throw new WireException("name runs past the end of the packet");
      }
      int len = b[pos] & 0xFF;
      if ((len & 0xC0) != 0) {
        throw new WireException("compression or extended label in the question");
      }
      if (len == 0) {
        return pos + 1;
      }
      pos += len + 1;
      // RFC 1035 3.1: 255 octets at most, counting the root label's length octet still to come.
      if (pos - off + 1 > 255) {
        throw new WireException("name longer than 255 octets");
      }
    }
  }

  public byte[] packet() {
    return packet;
  }

  public int id() {
    return Wire.u16(packet, 0);
  }

  /** Offset just past the question section. */
  public int questionEnd() {
    return questionEnd;
  }

  /** Offset just past the question name (the name starts at 12). */
  public int nameEnd() {
    return questionEnd - 4;
  }

  public int qtype() {
    return qtype;
  }

  public int qclass() {
    return qclass;
  }

  public boolean recursionDesired() {
    return (packet[2] & 0x01) != 0;
  }

  public boolean checkingDisabled() {
    return (packet[3] & 0x10) != 0;
  }

  public boolean edns() {
    return edns;
  }

  public boolean dnssecOk() {
    return dnssecOk;
  }

  /** Largest UDP reply the client accepts: 512 without EDNS, else its advertised size. */
  public int udpLimit() {
    return udpLimit;
  }

  public CacheKey key() {
    return key;
  }

  /** SERVFAIL for this query, with its question, for when no upstream could answer. */
  public byte[] servfail() {
    return ErrorReply.withQuestion(packet, questionEnd, Rcode.SERVFAIL, edns);
  }

  /** A query for this question to send upstream: new ID, RD set, lower-cased name, EDNS. */
  public byte[] upstreamQuery(int id) {
    int nameLen = key.nameLength();
    byte[] q = new byte[Wire.HEADER + nameLen + 4 + 11];
    Wire.put16(q, 0, id);
    q[2] = 0x01; // RD
    q[3] = (byte) (checkingDisabled() ? 0x10 : 0);
    Wire.put16(q, 4, 1);
    Wire.put16(q, 10, 1);
    System.arraycopy(key.bytes(), 0, q, Wire.HEADER, nameLen + 4);
    ErrorReply.writeOpt(q, Wire.HEADER + nameLen + 4, dnssecOk);
    return q;
  }
}

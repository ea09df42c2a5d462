package io.shoal.wire;

/**
 * A client's query, validated from raw bytes without a full parse: header, the one question, and
 * the EDNS OPT record if present. Holds the original packet so replies can echo the ID and the
 * exact letter case of the name (0x20).
 */
public final class DnsQuery {
  /** The UDP payload size we advertise upstream and to EDNS clients (DNS flag day 2020). */
  public static final int EDNS_UDP_SIZE = 1232;

  /**
   * The EDNS option (in the local and experimental range, RFC 6891 section 9) that marks a
   * cluster node's lookup of a key it believes this node owns: resolve it here, from the cache or
   * upstream, and never pass it on to another node, so rings that briefly disagree cannot bounce
   * a lookup between nodes. It grants nothing else: a client that sends it gets what any client
   * gets.
   */
  public static final int PEER_OPTION = 65001;

  private static final int MIN_UDP = 512;

  private final byte[] packet;
  private final int questionEnd;
  private final int qtype;
  private final int qclass;
  private final boolean edns;
  private final boolean dnssecOk;
  private final int udpLimit;
  private final CacheKey key;
  private final boolean fromPeer;

  private DnsQuery(
      byte[] packet, int questionEnd, int qtype, int qclass, boolean edns, boolean dnssecOk,
      int udpLimit, CacheKey key, boolean fromPeer) {
    this.fromPeer = fromPeer;
    this.packet = packet;
    this.questionEnd = questionEnd;
    this.qtype = qtype;
    this.qclass = qclass;
    this.edns = edns;
    this.dnssecOk = dnssecOk;
    this.udpLimit = udpLimit;
    this.key = key;
  }

  /** {@link #parse(byte[], ReplyPolicy)} under {@link ReplyPolicy#DEFAULT}. */
  public static DnsQuery parse(byte[] packet) throws BadQuery {
    return parse(packet, ReplyPolicy.DEFAULT);
  }

  /**
   * Validates a packet received on a listening socket.
   *
   * @throws BadQuery with a drop reason when the header cannot be read or QR is set (never
   *     answer a response: that is how reflection loops start), or with a reply made here when
   *     the header is readable but the query is not for the cache: FORMERR, NOTIMP, BADVERS,
   *     REFUSED (zone transfers), or the local answer to a class CH query. The reply carries the
   *     question when it parsed and shoal's OPT when the query had one (RFC 6891 section 7).
   */
  public static DnsQuery parse(byte[] packet, ReplyPolicy policy) throws BadQuery {
    int len = packet.length;
    if (len < Wire.HEADER) {
      throw BadQuery.drop("malformed", "packet shorter than a DNS header (" + len + " bytes)");
    }
    if ((packet[2] & 0x80) != 0) {
      throw BadQuery.drop("response", "QR bit set on a query socket");
    }
    int opcode = (packet[2] >> 3) & 0x0F;
    int qdcount = Wire.u16(packet, 4);
    // Walk as far as the packet allows, so any error reply can echo what parsed.
    int questionEnd = -1;
    int optAt = -1;
    String malformed = null;
    int pos = Wire.HEADER;
    try {
      if (qdcount == 1) {
        int nameEnd = questionNameEnd(packet, pos, len);
        if (nameEnd + 4 > len) {
          throw new WireException("question runs past the end of the packet");
        }
        questionEnd = nameEnd + 4;
        pos = questionEnd;
      } else {
        for (int i = 0; i < qdcount; i++) {
          pos = Wire.checkName(packet, pos, len) + 4;
          if (pos > len) {
            throw new WireException("question runs past the end of the packet");
          }
        }
      }
      int arStart = Wire.u16(packet, 6) + Wire.u16(packet, 8);
      int records = arStart + Wire.u16(packet, 10);
      for (int i = 0; i < records; i++) {
        int owner = pos;
        pos = Wire.checkName(packet, pos, len);
        if (pos + 10 > len) {
          throw new WireException("record header runs past the end of the packet");
        }
        int type = Wire.u16(packet, pos);
        int rdlen = Wire.u16(packet, pos + 8);
        if (type == Wire.TYPE_OPT) {
          boolean first = optAt < 0;
          if (first) {
            optAt = pos;
          }
          if (!first || i < arStart || packet[owner] != 0) {
            throw new WireException("misplaced or repeated OPT record");
          }
        }
        pos += 10 + rdlen;
        if (pos > len) {
          throw new WireException("record data runs past the end of the packet");
        }
      }
    } catch (WireException e) {
      malformed = e.getMessage();
    }
    boolean edns = optAt >= 0;
    boolean dnssecOk = edns && (packet[optAt + 6] & 0x80) != 0;
    if (opcode != 0) {
      throw BadQuery.answer("notimp", "opcode " + opcode,
          ErrorReply.of(packet, questionEnd, Rcode.NOTIMP, edns, dnssecOk), Rcode.NOTIMP);
    }
    if (malformed != null || qdcount != 1) {
      throw BadQuery.answer("formerr", malformed != null ? malformed : "QDCOUNT " + qdcount,
          ErrorReply.of(packet, questionEnd, Rcode.FORMERR, edns, dnssecOk), Rcode.FORMERR);
    }
    int ednsVersion = edns ? packet[optAt + 5] & 0xFF : 0;
    if (ednsVersion != 0) {
      // RFC 6891 section 6.1.3: we speak version 0 only, and say so in an OPT of version 0.
      throw BadQuery.answer("badvers", "EDNS version " + ednsVersion,
          ErrorReply.of(packet, questionEnd, Rcode.BADVERS, true, dnssecOk), Rcode.BADVERS);
    }
    int nameEnd = questionEnd - 4;
    int qtype = Wire.u16(packet, nameEnd);
    int qclass = Wire.u16(packet, nameEnd + 2);
    if (qtype == 251 || qtype == 252) {
      // Zone transfers are for authoritative servers, not a cache.
      throw BadQuery.answer("refused", "zone transfer",
          ErrorReply.of(packet, questionEnd, Rcode.REFUSED, edns, dnssecOk), Rcode.REFUSED);
    }
    if (qclass == Wire.CLASS_CH) {
      // Questions about this server (version.bind and the like): ours to answer, never an
      // upstream's, whose software they would disclose.
      byte[] reply = policy.chaosReply(packet, questionEnd, qtype, edns, dnssecOk);
      throw BadQuery.answer("chaos", "class CH", reply, reply[3] & 0x0F);
    }
    int udpLimit = edns ? Math.min(Math.max(MIN_UDP, Wire.u16(packet, optAt + 2)), policy.maxUdpSize()) : MIN_UDP;
    boolean checkingDisabled = (packet[3] & 0x10) != 0;
    int flags = (dnssecOk ? CacheKey.FLAG_DO : 0) | (checkingDisabled ? CacheKey.FLAG_CD : 0);
    CacheKey key = CacheKey.of(packet, Wire.HEADER, nameEnd, qtype, qclass, flags);
    boolean fromPeer = edns && hasOption(packet, optAt, PEER_OPTION);
    return new DnsQuery(packet, questionEnd, qtype, qclass, edns, dnssecOk, udpLimit, key, fromPeer);
  }

  /** Whether the OPT record whose type field is at {@code optAt} carries option {@code code}. */
  private static boolean hasOption(byte[] packet, int optAt, int code) {
    int pos = optAt + 10;
    int end = pos + Wire.u16(packet, optAt + 8);
    while (pos + 4 <= end) {
      if (Wire.u16(packet, pos) == code) {
        return true;
      }
      pos += 4 + Wire.u16(packet, pos + 2);
    }
    return false;
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

  /** AD in the query: the client understands AD in the reply (RFC 6840 section 5.7). */
  public boolean authenticData() {
    return (packet[3] & 0x20) != 0;
  }

  public boolean edns() {
    return edns;
  }

  public boolean dnssecOk() {
    return dnssecOk;
  }

  /**
   * Largest UDP reply this client gets: 512 without EDNS, else its advertised size capped at the
   * policy's maximum (a small query must not buy a large reply: amplification).
   */
  public int udpLimit() {
    return udpLimit;
  }

  public CacheKey key() {
    return key;
  }

  /** Whether this is another cluster node's owner lookup ({@link #PEER_OPTION}): resolve it here. */
  public boolean fromPeer() {
    return fromPeer;
  }

  /** SERVFAIL for this query, with its question, for when no upstream could answer. */
  public byte[] servfail() {
    return ErrorReply.of(packet, questionEnd, Rcode.SERVFAIL, edns, dnssecOk);
  }

  /** SERVFAIL for this query that says why in an extended DNS error (for an EDNS client). */
  public byte[] servfail(ExtendedError why) {
    return ErrorReply.of(packet, questionEnd, Rcode.SERVFAIL, edns, dnssecOk, why);
  }

  /** REFUSED for this query that says why in an extended DNS error (for an EDNS client). */
  public byte[] refused(ExtendedError why) {
    return ErrorReply.of(packet, questionEnd, Rcode.REFUSED, edns, dnssecOk, why);
  }

  /**
   * A reply from shoal's own data (local data, a response policy): {@code records} are the answer
   * then the authority records in wire form, each owner a full name or the pointer 0xC00C to the
   * question name (which keeps the client's letter case). Longer than {@code sizeLimit}: TC=1 and
   * no records.
   *
   * @param ede an extended error for an EDNS client, or null
   */
  public byte[] ownAnswer(
      int rcode, boolean authoritative, byte[] records, int answers, int authorities, ExtendedError ede,
      int sizeLimit) {
    return OwnAnswer.of(this, rcode, authoritative, records, answers, authorities, ede, sizeLimit);
  }

  /**
   * The SERVFAIL to remember in a cache for this question: header and question, no OPT (EDNS is
   * per hop; the hit that serves it adds its own).
   */
  public byte[] servfailToCache() {
    byte[] r = ErrorReply.of(packet, questionEnd, Rcode.SERVFAIL, false, false);
    // Stored with the question as the key holds it; the hit writes each client's letter case.
    System.arraycopy(key.bytes(), 0, r, Wire.HEADER, key.nameLength() + 4);
    return r;
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

  /**
   * This question as a cluster node asks the key's owner for it: {@link #upstreamQuery} with
   * {@link #PEER_OPTION} in its OPT, so the owner resolves it itself.
   */
  public byte[] peerQuery(int id) {
    byte[] plain = upstreamQuery(id);
    byte[] q = java.util.Arrays.copyOf(plain, plain.length + 4);
    int rdlen = plain.length - 2;
    Wire.put16(q, rdlen, 4);
    Wire.put16(q, plain.length, PEER_OPTION);
    Wire.put16(q, plain.length + 2, 0);
    return q;
  }

  /**
   * Sets the letter case of the question name in {@code query}, a query this node made from this
   * question (its name lower-cased at the header's end), one letter after another from the bits of
   * {@code bits} (used again from the first after 64 letters), as in draft-vixie-dnsext-dns0x20: a
   * reply must echo the name's exact case, which an off-path forger has to guess.
   *
   * @return the question as it now stands in {@code query}: name, type and class
   */
  public byte[] randomiseCase(byte[] query, long bits) {
    int end = Wire.HEADER + key.nameLength();
    int letter = 0;
    for (int i = Wire.HEADER; i < end; i++) {
      byte b = query[i];
      if (b >= 'a' && b <= 'z') {
        if ((bits >>> (letter++ & 63) & 1) != 0) {
          query[i] = (byte) (b - 32);
        }
      }
    }
    return java.util.Arrays.copyOfRange(query, Wire.HEADER, end + 4);
  }

  /**
   * This question as a joining node asks a name's previous owner for the answer it still holds:
   * {@link #peerQuery} without RD, so the node answers from its cache or refuses, and never asks
   * anyone else.
   */
  public byte[] peerCacheQuery(int id) {
    byte[] q = peerQuery(id);
    q[2] &= ~0x01;
    return q;
  }
}

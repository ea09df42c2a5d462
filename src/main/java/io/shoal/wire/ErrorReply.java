package io.shoal.wire;

/** Error replies shoal makes itself, built straight from a query's bytes. */
final class ErrorReply {
  static final int OPT_LENGTH = 11;

  private ErrorReply() {}

  /**
   * Header, the question when {@code questionEnd} is past the header (the query's one question
   * parsed), and shoal's own OPT when the query had one (RFC 6891 section 7), carrying the
   * client's DO bit (RFC 3225 section 3) and the upper bits of an extended rcode such as BADVERS.
   * Opcode, RD and CD are copied from the query; RA is set.
   *
   * @param rcode a 12-bit rcode: the low 4 bits go in the header, the rest in the OPT
   */
  static byte[] of(byte[] query, int questionEnd, int rcode, boolean opt, boolean dnssecOk) {
    return of(query, questionEnd, rcode, opt, dnssecOk, null);
  }

  /** As {@link #of(byte[], int, int, boolean, boolean)}, with an extended error in the OPT when there is one. */
  static byte[] of(byte[] query, int questionEnd, int rcode, boolean opt, boolean dnssecOk, ExtendedError ede) {
    int qEnd = questionEnd > Wire.HEADER ? questionEnd : Wire.HEADER;
    byte[] r = new byte[qEnd + (opt ? optLength(ede) : 0)];
    System.arraycopy(query, 0, r, 0, qEnd);
    r[2] = (byte) (0x80 | (query[2] & 0x79)); // QR; keep opcode and RD
    r[3] = (byte) (0x80 | (query[3] & 0x10) | (rcode & 0x0F)); // RA; keep CD
    Wire.put16(r, 4, qEnd > Wire.HEADER ? 1 : 0);
    Wire.put16(r, 6, 0);
    Wire.put16(r, 8, 0);
    Wire.put16(r, 10, opt ? 1 : 0);
    if (opt) {
      writeOpt(r, qEnd, dnssecOk, rcode >>> 4, ede);
    }
    return r;
  }

  /** Bytes of shoal's OPT record carrying {@code ede} (null: none). */
  static int optLength(ExtendedError ede) {
    return OPT_LENGTH + (ede == null ? 0 : ede.optionLength());
  }

  /** Writes shoal's 11-byte OPT (root owner, our UDP size, version 0, no options) at {@code off}. */
  static void writeOpt(byte[] b, int off, boolean dnssecOk) {
    writeOpt(b, off, dnssecOk, 0, null);
  }

  /** Writes shoal's OPT at {@code off}, with {@code ede} as its one option when not null. */
  static void writeOpt(byte[] b, int off, boolean dnssecOk, int extendedRcode, ExtendedError ede) {
    b[off] = 0;
    Wire.put16(b, off + 1, Wire.TYPE_OPT);
    Wire.put16(b, off + 3, DnsQuery.EDNS_UDP_SIZE);
    // TTL field: extended rcode (8 bits), version 0 (8 bits), DO and the other flags (16 bits).
    Wire.put32(b, off + 5, ((long) (extendedRcode & 0xFF) << 24) | (dnssecOk ? 0x8000 : 0));
    if (ede == null) {
      Wire.put16(b, off + 9, 0);
    } else {
      Wire.put16(b, off + 9, ede.optionLength());
      ede.write(b, off + OPT_LENGTH);
    }
  }
}

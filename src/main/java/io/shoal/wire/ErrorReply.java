package io.shoal.wire;

/** Error replies built straight from a query's bytes. */
final class ErrorReply {
  static final int OPT_LENGTH = 11;

  private ErrorReply() {}

  /** Header only (counts zero): for queries whose question cannot be trusted. */
  static byte[] headerOnly(byte[] query, int rcode) {
    byte[] r = new byte[Wire.HEADER];
    r[0] = query[0];
    r[1] = query[1];
    r[2] = (byte) (0x80 | (query[2] & 0x79)); // QR, keep opcode and RD
    r[3] = (byte) (0x80 | rcode); // RA
    return r;
  }

  /** Header plus the question, and an OPT record when the client used EDNS. */
  static byte[] withQuestion(byte[] query, int questionEnd, int rcode, boolean edns) {
    byte[] r = new byte[questionEnd + (edns ? OPT_LENGTH : 0)];
    System.arraycopy(query, 0, r, 0, questionEnd);
    r[2] = (byte) (0x80 | (query[2] & 0x79));
    r[3] = (byte) (0x80 | (query[3] & 0x10) | rcode);
    Wire.put16(r, 4, 1);
    Wire.put16(r, 6, 0);
    Wire.put16(r, 8, 0);
    Wire.put16(r, 10, edns ? 1 : 0);
    if (edns) {
      writeOpt(r, questionEnd, false);
    }
    return r;
  }

  /** Writes an 11-byte OPT pseudo-record (root owner, our UDP size, version 0) at {@code off}. */
  static void writeOpt(byte[] b, int off, boolean dnssecOk) {
    b[off] = 0;
    Wire.put16(b, off + 1, Wire.TYPE_OPT);
    Wire.put16(b, off + 3, DnsQuery.EDNS_UDP_SIZE);
    Wire.put32(b, off + 5, dnssecOk ? 0x8000 : 0);
    Wire.put16(b, off + 9, 0);
  }
}

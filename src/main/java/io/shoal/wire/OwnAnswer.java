package io.shoal.wire;

/** Replies shoal writes from data of its own (local data, a response policy), built from the query's bytes. */
final class OwnAnswer {
  private OwnAnswer() {}

  /**
   * Header (ID, opcode, RD and CD from the query; QR, RA, and AA when {@code authoritative}), the
   * question exactly as the client wrote it, {@code records} (answer then authority records, each
   * owner either a full name or a pointer to the question name at offset 12), and shoal's OPT with
   * {@code ede} when the query had EDNS. A reply longer than {@code sizeLimit} goes out as header,
   * question and OPT with TC=1, so the client asks again over a stream.
   */
  static byte[] of(
      DnsQuery query, int rcode, boolean authoritative, byte[] records, int answers, int authorities,
      ExtendedError ede, int sizeLimit) {
    byte[] q = query.packet();
    int qEnd = query.questionEnd();
    int optLen = query.edns() ? ErrorReply.optLength(ede) : 0;
    boolean truncated = qEnd + records.length + optLen > sizeLimit;
    int body = truncated ? 0 : records.length;
    byte[] r = new byte[qEnd + body + optLen];
    System.arraycopy(q, 0, r, 0, qEnd);
    r[2] = (byte) (0x80 | (q[2] & 0x79) | (authoritative ? 0x04 : 0) | (truncated ? 0x02 : 0));
    r[3] = (byte) (0x80 | (q[3] & 0x10) | (rcode & 0x0F));
    Wire.put16(r, 4, 1);
    Wire.put16(r, 6, truncated ? 0 : answers);
    Wire.put16(r, 8, truncated ? 0 : authorities);
    Wire.put16(r, 10, optLen > 0 ? 1 : 0);
    System.arraycopy(records, 0, r, qEnd, body);
    if (optLen > 0) {
      ErrorReply.writeOpt(r, qEnd + body, query.dnssecOk(), 0, ede);
    }
    return r;
  }
}

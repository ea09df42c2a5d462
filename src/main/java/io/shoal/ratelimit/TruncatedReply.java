package io.shoal.ratelimit;

/**
 * A reply cut down to what a rate-limited client needs to retry over TCP: the header with TC=1,
 * the question, and the OPT record when the reply had one (RFC 6891: an EDNS query gets OPT
 * back). Works on the raw bytes of a reply shoal itself rendered.
 */
final class TruncatedReply {
  private static final int HEADER = 12;
  private static final int TYPE_OPT = 41;
  /** More labels than a 255-octet name can hold: a bound on a walk over a damaged name. */
  private static final int MAX_LABELS = 128;

  private TruncatedReply() {}

  static byte[] of(byte[] reply) {
    try {
      int qd = u16(reply, 4);
      int records = u16(reply, 6) + u16(reply, 8) + u16(reply, 10);
      int additionalFrom = u16(reply, 6) + u16(reply, 8);
      int pos = HEADER;
      for (int i = 0; i < qd; i++) {
        pos = skipName(reply, pos) + 4;
      }
      int questionEnd = pos;
      int optStart = -1;
      int optEnd = -1;
      for (int i = 0; i < records && optStart < 0; i++) {
        int start = pos;
        pos = skipName(reply, pos);
        int type = u16(reply, pos);
        pos += 10 + u16(reply, pos + 8);
        if (i >= additionalFrom && type == TYPE_OPT) {
          optStart = start;
          optEnd = pos;
        }
      }
      int optLength = optStart < 0 ? 0 : optEnd - optStart;
      if (questionEnd > reply.length || optEnd > reply.length) {
        return headerOnly(reply);
      }
      byte[] r = new byte[questionEnd + optLength];
      System.arraycopy(reply, 0, r, 0, questionEnd);
      if (optLength > 0) {
        System.arraycopy(reply, optStart, r, questionEnd, optLength);
      }
      r[2] |= 0x02;
      r[6] = r[7] = r[8] = r[9] = r[10] = 0;
      r[11] = (byte) (optLength > 0 ? 1 : 0);
      return r;
    } catch (ArrayIndexOutOfBoundsException e) {
      return headerOnly(reply);
    }
  }

  private static byte[] headerOnly(byte[] reply) {
    byte[] r = new byte[HEADER];
    System.arraycopy(reply, 0, r, 0, Math.min(HEADER, reply.length));
    r[2] |= 0x02;
    for (int i = 4; i < HEADER; i++) {
      r[i] = 0;
    }
    return r;
  }

  /** Offset just past the name at {@code pos}: its root label, or its compression pointer. */
  private static int skipName(byte[] b, int pos) {
    for (int labels = 0; labels < MAX_LABELS; labels++) {
      int len = b[pos] & 0xFF;
      if ((len & 0xC0) == 0xC0) {
        return pos + 2;
      }
      if (len == 0) {
        return pos + 1;
      }
      pos += len + 1;
    }
    throw new ArrayIndexOutOfBoundsException("name with more than " + MAX_LABELS + " labels");
  }

  private static int u16(byte[] b, int off) {
    return (b[off] & 0xFF) << 8 | (b[off + 1] & 0xFF);
  }
}

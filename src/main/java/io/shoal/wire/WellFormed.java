package io.shoal.wire;

/**
 * Whether bytes are a DNS message at all (RFC 1035 section 4.1): a header, then as many
 * questions and records as its counts say, each name well formed, ending where the bytes end.
 * For transports that must tell "not DNS" (HTTP 400 for DoH, RFC 8484 section 4.2.1) from a DNS
 * message the server does not serve (answered in DNS: NOTIMP, FORMERR, REFUSED).
 */
public final class WellFormed {
  private WellFormed() {}

  public static boolean message(byte[] b) {
    if (b.length < Wire.HEADER) {
      return false;
    }
    try {
      int pos = Wire.HEADER;
      for (int q = Wire.u16(b, 4); q > 0; q--) {
        pos = Wire.checkName(b, pos, b.length) + 4;
        if (pos > b.length) {
          return false;
        }
      }
      int records = Wire.u16(b, 6) + Wire.u16(b, 8) + Wire.u16(b, 10);
      for (int r = 0; r < records; r++) {
        pos = Wire.checkName(b, pos, b.length) + 10;
        if (pos > b.length) {
          return false;
        }
        pos += Wire.u16(b, pos - 2);
        if (pos > b.length) {
          return false;
        }
      }
      return pos == b.length;
    } catch (WireException e) {
      return false;
    }
  }
}

package io.shoal.wire;

import java.nio.charset.StandardCharsets;

/**
 * What shoal decides about replies without asking the cache or an upstream: the largest UDP
 * reply it sends whatever a client advertises, and the answers to class CH questions about the
 * server itself (RFC 4892), which are never forwarded.
 *
 * @param maxUdpSize the cap on UDP replies (512 to 65535); larger answers go out with TC=1
 * @param identity the TXT answer to {@code id.server.} and {@code hostname.bind.}; empty refuses
 * @param version the TXT answer to {@code version.server.} and {@code version.bind.}; empty refuses
 */
public record ReplyPolicy(int maxUdpSize, String identity, String version) {
  /** DNS Flag Day 2020's 1232 bytes, and nothing disclosed about the server. */
  public static final ReplyPolicy DEFAULT = new ReplyPolicy(DnsQuery.EDNS_UDP_SIZE, "", "");

  /** The longest text one TXT character-string holds. */
  public static final int MAX_TEXT = 255;

  private static final byte[][] IDENTITY_NAMES = {wire("id.server."), wire("hostname.bind.")};
  private static final byte[][] VERSION_NAMES = {wire("version.server."), wire("version.bind.")};

  public ReplyPolicy {
    if (maxUdpSize < 512 || maxUdpSize > 65535) {
      throw new IllegalArgumentException("max UDP size must be 512 to 65535, got " + maxUdpSize);
    }
    checkText(identity);
    checkText(version);
  }

  private static void checkText(String text) {
    if (text.getBytes(StandardCharsets.UTF_8).length > MAX_TEXT) {
      throw new IllegalArgumentException("longer than " + MAX_TEXT + " bytes: '" + text + "'");
    }
  }

  /**
   * The reply to a class CH query whose question is {@code packet[12, questionEnd)}: a TXT
   * answer for the names above when configured, else REFUSED.
   */
  byte[] chaosReply(byte[] packet, int questionEnd, int qtype, boolean edns, boolean dnssecOk) {
    int nameEnd = questionEnd - 4;
    String text = null;
    if (qtype == Wire.TYPE_TXT || qtype == 255) {
      if (matches(packet, nameEnd, IDENTITY_NAMES)) {
        text = identity;
      } else if (matches(packet, nameEnd, VERSION_NAMES)) {
        text = version;
      }
    }
    if (text == null || text.isEmpty()) {
      return ErrorReply.of(packet, questionEnd, Rcode.REFUSED, edns, dnssecOk);
    }
    byte[] txt = text.getBytes(StandardCharsets.UTF_8);
    int recordLength = 2 + 10 + 1 + txt.length;
    byte[] r = ErrorReply.of(packet, questionEnd, Rcode.NOERROR, edns, dnssecOk);
    byte[] out = new byte[r.length + recordLength];
    System.arraycopy(r, 0, out, 0, questionEnd);
    int at = questionEnd;
    out[2] |= 0x04; // AA: shoal is the authority on itself
    Wire.put16(out, 6, 1);
    Wire.put16(out, at, 0xC000 | Wire.HEADER); // owner: the question name
    Wire.put16(out, at + 2, Wire.TYPE_TXT);
    Wire.put16(out, at + 4, Wire.CLASS_CH);
    Wire.put32(out, at + 6, 0); // TTL 0: nothing to cache downstream
    Wire.put16(out, at + 10, 1 + txt.length);
    out[at + 12] = (byte) txt.length;
    System.arraycopy(txt, 0, out, at + 13, txt.length);
    System.arraycopy(r, questionEnd, out, at + recordLength, r.length - questionEnd);
    return out;
  }

  private static boolean matches(byte[] packet, int nameEnd, byte[][] names) {
    int length = nameEnd - Wire.HEADER;
    for (byte[] name : names) {
      if (name.length == length && Wire.equalsIgnoreCase(packet, Wire.HEADER, name, 0, length)) {
        return true;
      }
    }
    return false;
  }

  private static byte[] wire(String name) {
    return CacheKey.nameToWire(name);
  }
}

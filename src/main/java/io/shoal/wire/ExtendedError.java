package io.shoal.wire;

import java.nio.charset.StandardCharsets;

/**
 * An extended DNS error (RFC 8914) that shoal adds to its own OPT record to say why a reply is
 * what it is. Only for clients that sent EDNS: without an OPT there is nowhere to put it.
 *
 * @param code the INFO-CODE
 * @param text EXTRA-TEXT, short ASCII for people reading a dig output; never an upstream's address
 */
public record ExtendedError(int code, String text) {
  /** The EDNS option code of an extended DNS error. */
  public static final int OPTION_CODE = 15;

  /** The answer is past its TTL and served because the upstreams failed (RFC 8767). */
  public static final ExtendedError STALE_ANSWER = new ExtendedError(3, "");
  /** An NXDOMAIN past its TTL, served because the upstreams failed (RFC 8767). */
  public static final ExtendedError STALE_NXDOMAIN = new ExtendedError(19, "");
  /** A SERVFAIL remembered from an earlier upstream failure, served from the cache. */
  public static final ExtendedError CACHED_ERROR = new ExtendedError(13, "");
  /** RD=0 and the answer is not cached: shoal forwards, it answers nothing on its own. */
  public static final ExtendedError NOT_AUTHORITATIVE = new ExtendedError(20, "not cached, and recursion not desired");
  /** Every upstream timed out, failed or was marked down. */
  public static final ExtendedError UPSTREAM_FAILED = new ExtendedError(22, "upstream failed");
  /** The upstreams answered REFUSED. */
  public static final ExtendedError UPSTREAM_REFUSED = new ExtendedError(22, "upstream refused");

  /** Bytes of the EDNS option: code, length, INFO-CODE and the text. */
  int optionLength() {
    return 6 + text.length();
  }

  /** Writes the option at {@code off}. */
  void write(byte[] b, int off) {
    byte[] t = text.getBytes(StandardCharsets.US_ASCII);
    Wire.put16(b, off, OPTION_CODE);
    Wire.put16(b, off + 2, 2 + t.length);
    Wire.put16(b, off + 4, code);
    System.arraycopy(t, 0, b, off + 6, t.length);
  }
}

package io.shoal.wire;

import java.util.OptionalInt;

/**
 * Why a packet on the listening socket is not for the cache: either it is dropped (and counted
 * under {@link #reason()}), or it gets the reply in {@link #reply()}, made without the cache or
 * an upstream (an error, or the local answer to a class CH query).
 */
public final class BadQuery extends Exception {
  private final String reason;
  private final byte[] reply;
  private final int rcode;

  private BadQuery(String reason, String detail, byte[] reply, int rcode) {
    super(detail, null, false, false);
    this.reason = reason;
    this.reply = reply;
    this.rcode = rcode;
  }

  static BadQuery drop(String reason, String detail) {
    return new BadQuery(reason, detail, null, -1);
  }

  static BadQuery answer(String reason, String detail, byte[] reply, int rcode) {
    return new BadQuery(reason, detail, reply, rcode);
  }

  /** A short label: malformed, response (dropped); formerr, notimp, badvers, refused, chaos (answered). */
  public String reason() {
    return reason;
  }

  /** True when the packet must be dropped without an answer. */
  public boolean dropped() {
    return reply == null;
  }

  /** The error reply to send back, or null when dropped. */
  public byte[] reply() {
    return reply;
  }

  public OptionalInt rcode() {
    return rcode < 0 ? OptionalInt.empty() : OptionalInt.of(rcode);
  }
}

package io.shoal.wire;

/** A DNS message that does not follow the wire format. */
public final class WireException extends Exception {
  public WireException(String message) {
    super(message, null, false, false);
  }
}

package io.shoal.wire;

import java.util.Arrays;
import java.util.Optional;

/**
 * EDNS(0) padding (RFC 7830) of replies on encrypted transports, so their length tells an
 * observer little about the name asked: a reply to a query that carries the Padding option is
 * padded to a multiple of 468 bytes (RFC 8467 section 4.1, the Block-Length Padding strategy).
 */
public final class Padding {
  /** The Padding option's code. */
  static final int OPTION = 12;
  /** RFC 8467's recommended block for responses. */
  public static final int BLOCK = 468;
  private static final int MAX_MESSAGE = 65535;

  private Padding() {}

  /** {@code reply} padded when {@code query} asked for it (RFC 8467: only then); else as it is. */
  public static Optional<byte[]> forQuery(byte[] query, Optional<byte[]> reply) {
    return reply.isPresent() && requested(query) ? Optional.of(pad(reply.get())) : reply;
  }

  /** Whether {@code query}'s OPT carries the Padding option. */
  static boolean requested(byte[] query) {
    ScannedAnswer scanned;
    try {
      scanned = ScannedAnswer.scan(query);
    } catch (WireException e) {
      return false;
    }
    if (scanned.optStart() < 0) {
      return false;
    }
    int pos = scanned.optStart() + 11;
    int end = scanned.optEnd();
    while (pos + 4 <= end) {
      if (Wire.u16(query, pos) == OPTION) {
        return true;
      }
      pos += 4 + Wire.u16(query, pos + 2);
    }
    return false;
  }

  /**
   * {@code reply} with a Padding option added to its OPT, to the next multiple of {@link #BLOCK}
   * (or to 65535 bytes where the next multiple is larger); a reply without OPT as its last record
   * (shoal always puts its OPT last) is returned as it is.
   */
  static byte[] pad(byte[] reply) {
    ScannedAnswer scanned;
    try {
      scanned = ScannedAnswer.scan(reply);
    } catch (WireException e) {
      return reply;
    }
    int n = reply.length;
    if (scanned.optStart() < 0 || scanned.optEnd() != n || n + 4 > MAX_MESSAGE) {
      return reply;
    }
    int target = Math.min(MAX_MESSAGE, (n + 4 + BLOCK - 1) / BLOCK * BLOCK);
    int padding = target - n - 4;
    byte[] out = Arrays.copyOf(reply, target);
    Wire.put16(out, n, OPTION);
    Wire.put16(out, n + 2, padding);
    int rdlength = scanned.optStart() + 9;
    Wire.put16(out, rdlength, Wire.u16(reply, rdlength) + 4 + padding);
    return out;
  }
}

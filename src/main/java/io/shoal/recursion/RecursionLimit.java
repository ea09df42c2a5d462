package io.shoal.recursion;

import io.shoal.wire.ExtendedError;

/** A resolution stopped by one of its limits, or because no authority could be reached: it ends in SERVFAIL. */
final class RecursionLimit extends RuntimeException {
  /** The {@code limit} label of shoal_recursion_limit_hits_total; null when no limit was hit. */
  final String limit;
  final ExtendedError why;

  RecursionLimit(String limit, ExtendedError why) {
    super(why.text(), null, false, false);
    this.limit = limit;
    this.why = why;
  }

  static RecursionLimit hit(String limit, String text) {
    return new RecursionLimit(limit, new ExtendedError(0, text));
  }

  static RecursionLimit unreachable(String text) {
    // RFC 8914 22: No Reachable Authority.
    return new RecursionLimit(null, new ExtendedError(22, text));
  }
}

package io.shoal.study;

/** An attack running against the server during one robustness phase, bounded in count and time. */
interface Attack extends AutoCloseable {

  /**
   * What an attack did.
   *
   * @param sent packets sent, or connections opened for a TCP attack
   * @param perSecond {@code sent} over the time it ran
   * @param detail the rest, in words, for robustness.csv and the summary
   */
  record Report(long sent, double perSecond, String detail) {}

  /** Stops the attack (waits, bounded, for its threads) and says what it did. Idempotent. */
  Report stop();

  @Override
  default void close() {
    stop();
  }
}

package io.shoal.study.attack;

/** An attack running against the server during one robustness phase, bounded in count and time. */
interface Attack extends AutoCloseable {

  /**
   * What an attack did.
   *
   * @param sent packets sent, or connections opened for a TCP attack
   * @param perSecond {@code sent} over the time it ran
   * @param detail the rest, in words, for robustness.csv and the summary
   * @param held what became of the connections of a TCP attack; null for the others
   */
  record Report(long sent, double perSecond, String detail, PhaseRow.Held held) {

    Report(long sent, double perSecond, String detail) {
      this(sent, perSecond, detail, null);
    }
  }

  /** Stops the attack (waits, bounded, for its threads) and says what it did. Idempotent. */
  Report stop();

  /**
   * Waits for a thread of the robustness study (an attack, the hostile upstream, the footprint
   * sampler) that was told to stop; bounded, so a stuck thread cannot hang the study (they are
   * daemons and end with it).
   */
  static void awaitEnd(Thread thread) {
    try {
      thread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  default void close() {
    stop();
  }
}

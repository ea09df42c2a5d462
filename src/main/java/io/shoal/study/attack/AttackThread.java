package io.shoal.study.attack;

/**
 * An attack run by one daemon thread of the study process: {@link #stop} tells it to end, waits
 * for it (bounded) and reports what it did, once.
 */
abstract class AttackThread implements Attack {
  private final Thread thread;
  /** Set by {@link #stop}; the attack's loop checks it. */
  protected volatile boolean stopped;
  private Report report;

  protected AttackThread(String name) {
    this.thread = new Thread(this::attack, name);
    thread.setDaemon(true);
  }

  /** The attack itself, until {@link #stopped} or its own count and time limits end it. */
  protected abstract void attack();

  /** What the attack did, called once after its thread ended; releases what it still holds. */
  protected abstract Report finish();

  /** Starts the thread; called once the subclass is built. */
  protected final void begin() {
    thread.start();
  }

  /** True until the attack's thread ended, by its own limits or by {@link #stop}. */
  final boolean running() {
    return thread.isAlive();
  }

  @Override
  public final synchronized Report stop() {
    if (report == null) {
      stopped = true;
      Attack.awaitEnd(thread);
      report = finish();
    }
    return report;
  }
}

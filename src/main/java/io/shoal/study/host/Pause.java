package io.shoal.study.host;

import java.time.Duration;

/** A wait between study steps that an interrupt (Ctrl-C) turns into the end of the study. */
public final class Pause {
  private Pause() {}

  /** Sleeps; an interrupt ends the study. */
  public static void sleep(Duration d) throws StudyException {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted", e);
    }
  }
}

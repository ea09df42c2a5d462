package io.shoal.study.scenario;

/** A scenario that cannot be run as written: unknown name, bad key or value. */
public final class ScenarioException extends RuntimeException {
  public ScenarioException(String message) {
    super(message);
  }
}

package io.shoal.upstream;

/** An upstream exchange that produced no usable answer. */
public final class UpstreamException extends Exception {
  private final String outcome;

  public UpstreamException(String outcome, String message) {
    super(message, null, false, false);
    this.outcome = outcome;
  }

  /** Metric label: timeout, error or overload. */
  public String outcome() {
    return outcome;
  }
}

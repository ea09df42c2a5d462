package io.shoal.upstream;

/** An upstream exchange that produced no usable answer. */
public final class UpstreamException extends Exception {
  /** Outcome of an exchange refused here because the upstream socket budget is spent. */
  public static final String OVERLOAD = "overload";

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

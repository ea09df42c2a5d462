package io.shoal.policy;

/** What a response policy does with a query whose name it matches; {@link #label()} is the metric label. */
public enum PolicyAction {
  NXDOMAIN("nxdomain"),
  NODATA("nodata"),
  REFUSE("refuse"),
  DROP("drop"),
  /** Resolved as usual, and no later policy is consulted (an allowlist entry). */
  PASSTHRU("passthru"),
  /** Answered from records at the trigger (RPZ local data). */
  LOCAL_DATA("local_data"),
  /** Answered with a CNAME to another name (RPZ). */
  CNAME("cname");

  private final String label;

  PolicyAction(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  /** The action a domain list's {@code word} names, or null when a list cannot take it. */
  public static PolicyAction forList(String word) {
    for (PolicyAction a : new PolicyAction[] {NXDOMAIN, NODATA, REFUSE, DROP}) {
      if (a.label.equals(word)) {
        return a;
      }
    }
    return null;
  }
}

package io.shoal.ingress;

/** Whether a worker's reply waits for the cache fill to commit. */
public enum FillMode {
  /** Reply first; the fill commits in the background. */
  WRITE_BEHIND("write-behind"),
  /** Reply only after the fill committed (a blocking "sync runtime", for the studies). */
  WRITE_THROUGH("write-through");

  private final String configName;

  FillMode(String configName) {
    this.configName = configName;
  }

  public String configName() {
    return configName;
  }
}

package io.shoal.cache;

/** What a full cache evicts to make room for a new answer. */
public enum WhenFull {
  /** The entry that expires soonest, found exactly through an expiry index. */
  EVICT_ONE("evict_one"),
  /** The soonest-expiring of a few randomly chosen entries: no index to maintain. */
  SAMPLE("sample");

  private final String configName;

  WhenFull(String configName) {
    this.configName = configName;
  }

  public String configName() {
    return configName;
  }
}

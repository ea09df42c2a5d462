package io.shoal.config;

/** A configuration value that shoal cannot run with; the message names the key. */
public final class InvalidConfigException extends RuntimeException {
  private final String key;

  public InvalidConfigException(String key, String message) {
    super(key + ": " + message);
    this.key = key;
  }

  /** The full path of the offending key, e.g. {@code shoal.caches.answers.when_full}. */
  public String key() {
    return key;
  }
}

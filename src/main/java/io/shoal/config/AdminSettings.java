package io.shoal.config;

import java.nio.file.Path;

/**
 * The admin HTTP endpoint ({@code shoal.admin}): cache flush; meant to stay on localhost, and
 * answers only requests carrying the token the node writes to {@code tokenFile} at start.
 *
 * @param tokenFile where the token goes; {@value #PORT} in it stands for the endpoint's port, so
 *     nodes started in one directory each keep a token of their own
 */
public record AdminSettings(boolean enabled, String host, int port, String tokenFile) {
  /** Stands for the admin port in {@code token_file}. */
  public static final String PORT = "{port}";
  /** The embedded default of {@code token_file}, which {@code shoal cache flush} looks for too. */
  public static final String DEFAULT_TOKEN_FILE = "data/admin-" + PORT + ".token";

  /** The token file of the endpoint bound to {@code boundPort}. */
  public Path tokenFileFor(int boundPort) {
    return tokenFile(tokenFile, boundPort);
  }

  /**
   * The token file as known before the endpoint binds, to be written before any DNS socket
   * answers: the file itself for a fixed port, or for any port when the file's name does not
   * depend on it; null when it names a port chosen at binding (port 0 with {@value #PORT}).
   */
  public Path tokenFileBeforeBinding() {
    return port != 0 || !tokenFile.contains(PORT) ? tokenFileFor(port) : null;
  }

  /** {@code pattern} with {@value #PORT} replaced by {@code port}. */
  public static Path tokenFile(String pattern, int port) {
    return Path.of(pattern.replace(PORT, Integer.toString(port)));
  }
}

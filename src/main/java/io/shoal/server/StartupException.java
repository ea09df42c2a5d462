package io.shoal.server;

/** A node that cannot start, with a message meant for the operator. */
public final class StartupException extends RuntimeException {
  public StartupException(String message) {
    super(message);
  }
}

package io.shoal.config;

import java.nio.file.Path;

/**
 * The admin HTTP endpoint ({@code shoal.admin}): cache flush; meant to stay on localhost, and
 * answers only requests carrying the token the node writes to {@code tokenFile} at start.
 */
public record AdminSettings(boolean enabled, String host, int port, Path tokenFile) {}

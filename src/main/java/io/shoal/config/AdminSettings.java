package io.shoal.config;

/** The admin HTTP endpoint ({@code shoal.admin}): cache flush; meant to stay on localhost. */
public record AdminSettings(boolean enabled, String host, int port) {}

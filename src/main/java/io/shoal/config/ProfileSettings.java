package io.shoal.config;

import java.util.List;

/** Which cache and upstream group serve names under some suffixes ({@code shoal.profiles.<name>}). */
public record ProfileSettings(String name, List<String> match, String cache, String upstreams) {}

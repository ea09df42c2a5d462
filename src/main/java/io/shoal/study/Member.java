package io.shoal.study;

import com.typesafe.config.Config;

/**
 * One server a scenario measures. For shoal, {@code config} holds keys under {@code shoal}
 * merged over the recipe's configuration; for a peer, its own settings (see {@link MemberKind}).
 */
public record Member(String name, MemberKind kind, Config config) {}

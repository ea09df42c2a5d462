package io.shoal.config;

/**
 * How many cache misses a second may go upstream per client prefix and per zone ({@code
 * shoal.miss_budget}); beyond either, a miss is answered SERVFAIL at once.
 *
 * @param perClient misses a second per client prefix; 0: no client budget
 * @param perZone misses a second per zone (the question name's last {@code zoneLabels} labels); 0: no zone budget
 * @param clientPrefixV4 the bits of an IPv4 address that make a client (24: its /24)
 * @param clientPrefixV6 the bits of an IPv6 address that make a client (56: its /56)
 * @param zoneLabels labels from the right that name a question's zone (2: example.com)
 * @param includeLoopback whether loopback clients have a budget too
 * @param tableSize clients and zones tracked at once, each (fixed tables: memory does not grow)
 */
public record MissBudgetSettings(
    int perClient, int perZone, int clientPrefixV4, int clientPrefixV6, int zoneLabels, boolean includeLoopback,
    int tableSize) {
  /** No budgets: every miss goes on to its worker. */
  public static final MissBudgetSettings OFF = new MissBudgetSettings(0, 0, 24, 56, 2, false, 1024);

  /** True when either budget is set. */
  public boolean enabled() {
    return perClient > 0 || perZone > 0;
  }

  static MissBudgetSettings from(Section s) {
    s.allowOnly("per_client", "per_zone", "client_prefix_v4", "client_prefix_v6", "zone_labels", "include_loopback",
        "table_size");
    return new MissBudgetSettings(
        (int) s.integer("per_client", 0, 10_000_000), (int) s.integer("per_zone", 0, 10_000_000),
        (int) s.integer("client_prefix_v4", 0, 32), (int) s.integer("client_prefix_v6", 0, 64),
        (int) s.integer("zone_labels", 1, 127), s.bool("include_loopback"),
        (int) s.integer("table_size", 1024, 1 << 24));
  }
}

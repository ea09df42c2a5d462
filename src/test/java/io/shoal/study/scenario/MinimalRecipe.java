package io.shoal.study.scenario;

/**
 * The smallest recipe a scenario parses with, for the tests of the study runner: a zone of four
 * names, one client, one-second runs, nothing a run would need to be real. A test names only what
 * it varies, as HOCON inside the recipe ({@code "max_entries = 2048"}, {@code "dnsperf.duration =
 * 20s"}; a blank one adds nothing); a key given again replaces the default's, and an object's keys
 * merge into it.
 */
public final class MinimalRecipe {
  private static final String DEFAULTS = "zone = \"bench.test.\", stub_ttl = 60s,"
      + " queries { names = 4, lines = 10, seed = 1 }, ingress_workers = 1, fill = write-behind,"
      + " max_entries = 2, when_full = evict_one, shard_count = 1, map_size = 1MiB, sync_interval = 1s,"
      + " upstream_workers = 1, jvm_options = [],"
      + " dnsperf { clients = 1, outstanding = 1, threads = 1, duration = 1s, warmup = 0s },"
      + " quick { duration = 1s, warmup = 0s }";

  private MinimalRecipe() {}

  /** {@code recipe { DEFAULTS, overrides... }} and a line's end, for the scenario's text to go on from. */
  public static String with(String... overrides) {
    StringBuilder recipe = new StringBuilder("recipe { ").append(DEFAULTS);
    for (String o : overrides) {
      if (!o.isBlank()) {
        recipe.append(", ").append(o);
      }
    }
    return recipe.append(" }\n").toString();
  }
}

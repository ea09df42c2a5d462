package io.shoal.study.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.cache.HeapBudget;
import io.shoal.config.ShoalConfig;
import io.shoal.study.run.StudyRun;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The cache_memory scenario of the catalog, and what a cache_memory block accepts. */
class CacheMemoryScenarioTest {
  private static final Path CATALOG = Path.of("bench", "scenarios");

  private static final String RECIPE = recipe("max_entries = 1000");
  private static final String MEMBERS = "members = [{ name = u, kind = unbound, config { threads = 1 } },"
      + " { name = s, kind = shoal }]\n";

  /** The minimal recipe with an hour's TTL and two-second runs, and these keys. */
  private static String recipe(String... keys) {
    return MinimalRecipe.with(Stream.concat(Stream.of("stub_ttl = 3600s", "dnsperf.duration = 2s"), Stream.of(keys))
        .toArray(String[]::new));
  }

  private static Scenario parse(String recipe, String members, String block) {
    return Scenario.from("t", ConfigFactory.parseString(recipe + members + block));
  }

  @Test
  void theCatalogScenarioMeasuresShoalMemoryBesideOneThreadOfUnboundAtThreeSizes() throws IOException {
    Scenario s = Scenario.load(CATALOG.resolve("cache_memory.conf"));
    StudyRun.checkShoalMembers(s);
    CacheMemoryPlan p = s.cacheMemory();
    assertEquals(List.of(4096, 100_000, 1_000_000), p.sizes(false));
    assertEquals(p.quickSizes(), p.sizes(true));
    assertTrue(p.quickSizes().stream().allMatch(n -> n <= 10_000), "a quick run fills in seconds: " + p.quickSizes());
    assertEquals("unbound", s.baseline());
    assertEquals(List.of(MemberKind.UNBOUND, MemberKind.SHOAL), s.members().stream().map(Member::kind).toList());
    Member unbound = s.members().get(0);
    assertEquals(1, unbound.config().getInt("threads"));
    // unbound holds the largest size without evicting, at the per-entry sizes measured for these answers
    assertTrue(unbound.config().getLong("msg_cache_size") >= 1_000_000L * 258 * 2);
    assertTrue(unbound.config().getLong("rrset_cache_size") >= 1_000_000L * 248 * 2);
    // shoal's memory cache holds the largest size and the readiness answer without evicting
    assertTrue(s.recipe().maxEntries() > 1_000_001);
    Member shoal = s.members().get(1);
    assertEquals("shoal-memory", shoal.name());
    assertTrue(!shoal.config().hasPath("caches.answers.backend")
        || shoal.config().getString("caches.answers.backend").equals("memory"));
    // shoal runs as an operator gets it from bin/shoal serve, the heap's ceiling from these max_entries
    assertEquals(binShoalServeOptions(HeapBudget.javaHeapOption(ShoalConfig.from(ConfigFactory.parseString(
        "shoal.caches.answers.max_entries = " + s.recipe().maxEntries()).withFallback(ConfigFactory.load()).resolve()))),
        s.recipe().jvmOptions());
    // longer than bin/shoal's 30 s trim and periodic-collection intervals
    assertTrue(p.quiet().compareTo(Duration.ofSeconds(30)) > 0, p.quiet().toString());
    assertTrue(p.fillQps() > 0 && p.fillOutstanding() > 0);
    assertNull(s.attacks());
    assertNull(s.outage());
  }

  /** The JVM options bin/shoal passes to serve (its opts and trim arrays), with {@code heap} for its derived -Xmx. */
  private static List<String> binShoalServeOptions(String heap) throws IOException {
    String script = Files.readString(Path.of("bin", "shoal"));
    List<String> options = new ArrayList<>();
    for (String array : List.of("opts=(", "trim=(")) {
      int start = script.indexOf(array) + array.length();
      assertTrue(start >= array.length(), "bin/shoal has no " + array);
      for (String word : script.substring(start, script.indexOf(')', start)).trim().split("\\s+")) {
        options.add(word.equals("\"$heap\"") ? heap : word);
      }
    }
    return options;
  }

  @Test
  void aBlockWithoutSizesTakesTheDefaults() {
    Scenario s = Scenario.from("t", ConfigFactory.parseString(recipe("max_entries = 2000000") + MEMBERS + "cache_memory { }"));
    CacheMemoryPlan p = s.cacheMemory();
    assertEquals(CacheMemoryPlan.DEFAULT_SIZES, p.sizes(false));
    assertEquals(CacheMemoryPlan.DEFAULT_QUICK_SIZES, p.sizes(true));
    assertEquals(20_000, p.fillQps());
    assertEquals(Duration.ofSeconds(20), p.idleLimit());
    assertEquals(Duration.ofSeconds(60), p.entriesLimit());
    assertEquals(Duration.ZERO, p.quiet());
    assertNull(Scenario.from("t", ConfigFactory.parseString(RECIPE + MEMBERS)).cacheMemory());
  }

  @Test
  void mistakesAreRejectedWithTheKey() {
    String sizes = "cache_memory { sizes = [100, 500], quick_sizes = [10] }";
    assertEquals(List.of(100, 500), parse(RECIPE, MEMBERS, sizes).cacheMemory().sizes(false));
    List<String[]> bad = List.of(
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [100, 1000], quick_sizes = [10] }",
            "cache_memory.sizes: 1000 names do not fit recipe.max_entries (1000)"},
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [100], quick_sizes = [5000] }",
            "cache_memory.quick_sizes: 5000 names do not fit"},
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [], quick_sizes = [10] }",
            "cache_memory.sizes: list at least one size"},
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [100, 0], quick_sizes = [10] }",
            "cache_memory.sizes: each size from 1"},
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [100, 100], quick_sizes = [10] }",
            "cache_memory.sizes: a size is listed twice"},
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [100], quick_sizes = [10], fill_qps = 0 }",
            "cache_memory.fill_qps"},
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [100], quick_sizes = [10], fill_outstanding = 70000 }",
            "cache_memory.fill_outstanding"},
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [100], quick_sizes = [10], idle_limit = 0s }",
            "cache_memory.idle_limit"},
        new String[] {RECIPE + MEMBERS + "cache_memory { sizes = [100], quick_sizes = [10], quiet = 11m }",
            "cache_memory.quiet: from 0s to 10m"},
        new String[] {RECIPE + MEMBERS + "cache_memory { size = [100] }", "cache_memory.size: unknown key"},
        new String[] {RECIPE + "members = [{ name = k, kind = kresd }]\n" + sizes,
            "members[0].kind: a cache_memory scenario measures shoal and unbound members only"},
        new String[] {RECIPE + "members = [{ name = s, kind = shoal, nodes = 2 }]\n" + sizes,
            "members[0]: a cache_memory member is one process"},
        new String[] {RECIPE + "members = [{ name = s, kind = shoal, transport = tcp }]\n" + sizes,
            "members[0]: a cache_memory member is one process"},
        new String[] {RECIPE + "members = [{ name = s, kind = shoal, config { caches.answers.max_entries = 10 } }]\n"
            + sizes, "members[0].config.caches.answers.max_entries"},
        new String[] {recipe("max_entries = 1000", "rounds = 2") + MEMBERS + sizes, "recipe.rounds must be 1"},
        new String[] {recipe("max_entries = 1000", "cpu_quota = 0.5") + "members = [{ name = s, kind = shoal }]\n" + sizes,
            "recipe.cpu_quota: the cache_memory test runs every member without one"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(b[0])), b[0]);
      assertTrue(e.getMessage().contains(b[1]), e.getMessage());
    }
  }
}

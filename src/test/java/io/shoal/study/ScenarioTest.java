package io.shoal.study;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The scenario catalog in bench/scenarios: every file parses, and its shoal members validate. */
class ScenarioTest {
  private static final Path CATALOG = Path.of("bench", "scenarios");

  @Test
  void theCatalogHoldsTheAgreedScenarios() {
    assertTrue(Scenario.names(CATALOG).containsAll(
        List.of("cache_churn", "cache_churn_write_through", "cache_hit", "thin_ingress", "peers")),
        Scenario.names(CATALOG).toString());
  }

  @Test
  void everyScenarioLoadsAndItsShoalMembersAreValidConfigurations() {
    for (String name : Scenario.names(CATALOG)) {
      Scenario s = Scenario.load(CATALOG.resolve(name + ".conf"));
      StudyRun.checkShoalMembers(s);
      assertTrue(s.members().stream().anyMatch(m -> m.name().equals(s.baseline())), name);
    }
  }

  @Test
  void churnComparesMemoryWithEveryLmdbSyncMode() {
    Scenario s = Scenario.load(CATALOG.resolve("cache_churn.conf"));
    assertEquals(8, s.recipe().ingressWorkers());
    assertEquals(2048, s.recipe().maxEntries());
    assertEquals(4096, s.recipe().queries().names());
    assertEquals(60, s.recipe().stubTtl().toSeconds());
    assertEquals(16, s.recipe().shardCount());
    assertEquals(8, s.recipe().load().clients());
    assertEquals(200, s.recipe().load().outstanding());
    assertEquals(1, s.recipe().load().threads());
    Set<String> syncs = s.members().stream()
        .filter(m -> m.config().hasPath("caches.answers.lmdb.sync"))
        .map(m -> m.config().getString("caches.answers.lmdb.sync")).collect(Collectors.toSet());
    assertEquals(Set.of("full", "no_meta", "periodic", "none"), syncs);
    assertEquals("write-through", Scenario.load(CATALOG.resolve("cache_churn_write_through.conf")).recipe().fill());
    assertEquals(2, Scenario.load(CATALOG.resolve("thin_ingress.conf")).recipe().ingressWorkers());
  }

  @Test
  void peersNeedIsolationAndHaveEveryPeerKind() {
    Scenario s = Scenario.load(CATALOG.resolve("peers.conf"));
    assertTrue(s.needsIsolation());
    assertEquals(Set.of(MemberKind.values()), s.members().stream().map(Member::kind).collect(Collectors.toSet()));
    assertFalse(Scenario.load(CATALOG.resolve("cache_churn.conf")).needsIsolation());
  }

  @Test
  void typosAreRejectedWithTheKey() {
    String base = "recipe { zone = \"bench.test.\", stub_ttl = 60s, queries { names = 4, lines = 10, seed = 1 },"
        + " ingress_workers = 1, fill = write-behind, max_entries = 2, when_full = evict_one, shard_count = 1,"
        + " map_size = 1MiB, sync_interval = 1s, upstream_workers = 1, jvm_options = [],"
        + " dnsperf { clients = 1, outstanding = 1, threads = 1, duration = 1s, warmup = 0s },"
        + " quick { duration = 1s, warmup = 0s } }\n";
    Scenario ok = Scenario.from("t", ConfigFactory.parseString(base + "members = [{ name = a, kind = shoal }]"));
    assertEquals("a", ok.baseline());
    IllegalArgumentException kind = assertThrows(IllegalArgumentException.class, () -> Scenario.from("t",
        ConfigFactory.parseString(base + "members = [{ name = a, kind = bind9 }]")));
    assertTrue(kind.getMessage().contains("unbound"), kind.getMessage());
    IllegalArgumentException key = assertThrows(IllegalArgumentException.class, () -> Scenario.from("t",
        ConfigFactory.parseString(base + "members = [{ name = a, kind = unbound, config { cache_sise = 1 } }]")));
    assertTrue(key.getMessage().contains("members[0].config.cache_sise"), key.getMessage());
    ScenarioException shoal = assertThrows(ScenarioException.class, () -> StudyRun.checkShoalMembers(Scenario.from(
        "t", ConfigFactory.parseString(base + "members = [{ name = a, kind = shoal, config { ingress.workerz = 2 } }]"))));
    assertTrue(shoal.getMessage().contains("workerz"), shoal.getMessage());
  }

  @Test
  void queryFileIsDeterministicAndDrawsWithReplacement(@TempDir Path dir) throws IOException {
    QueryFile q = new QueryFile("bench.test.", 100, 5000, 42);
    q.write(dir.resolve("a"));
    q.write(dir.resolve("b"));
    assertArrayEquals(Files.readAllBytes(dir.resolve("a")), Files.readAllBytes(dir.resolve("b")));
    List<String> lines = Files.readAllLines(dir.resolve("a"));
    assertEquals(5000, lines.size());
    assertTrue(lines.stream().allMatch(l -> l.matches("n\\d{1,2}\\.bench\\.test A")), lines.get(0));
    long distinct = lines.stream().distinct().count();
    assertTrue(distinct > 90 && distinct <= 100, "distinct names: " + distinct);
    // with replacement: some name comes back before all the others have been seen
    assertTrue(lines.subList(0, 100).stream().distinct().count() < 100);
    new QueryFile("bench.test.", 100, 5000, 43).write(dir.resolve("c"));
    assertFalse(Files.readString(dir.resolve("a")).equals(Files.readString(dir.resolve("c"))));
  }

  @Test
  void knotcStatsGiveTheQueryCount() {
    assertEquals(368883, KnotUpstream.parseQueryCount("mod-stats.server-operation[query] = 368883\n"
        + "mod-stats.request-bytes[query] = 12442085\n"));
    assertEquals(0, KnotUpstream.parseQueryCount("server.zone-count = 1\n"));
  }
}

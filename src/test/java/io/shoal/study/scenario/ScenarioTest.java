package io.shoal.study.scenario;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.study.attack.AttackMemberConfig;
import io.shoal.study.report.OutageSummary;
import io.shoal.study.run.StudyRun;
import io.shoal.study.server.ClusterPlacement;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.server.ShoalMemberConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The scenario catalog in bench/scenarios: every file parses, and its shoal members validate. */
class ScenarioTest {
  private static final Path CATALOG = Path.of("bench", "scenarios");

  @Test
  void theCatalogHoldsTheAgreedScenarios() {
    assertTrue(Scenario.names(CATALOG).containsAll(
        List.of("cache_churn", "cache_churn_write_through", "cache_hit", "thin_ingress", "peers", "cluster_churn",
            "cluster_hit", "cluster_kill", "cluster_minority", "robustness", "upstream_outage")),
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
  void peersNeedIsolationAndHaveEveryResolverKind() {
    Scenario s = Scenario.load(CATALOG.resolve("peers.conf"));
    assertTrue(s.needsIsolation());
    // every kind but knotd, which is no resolver: it answers from its zone (the ceiling in query_path)
    assertEquals(EnumSet.complementOf(EnumSet.of(MemberKind.KNOTD)),
        s.members().stream().map(Member::kind).collect(Collectors.toSet()));
    assertFalse(Scenario.load(CATALOG.resolve("cache_churn.conf")).needsIsolation());
  }

  @Test
  void queryPathPutsShoalBesideUnboundAndKnotdOnWarmHitsAndUnboundOnChurn() {
    Scenario hits = Scenario.load(CATALOG.resolve("query_path.conf"));
    assertEquals(2048, hits.recipe().queries().names());
    assertEquals(4096, hits.recipe().maxEntries());
    assertEquals(3600, hits.recipe().stubTtl().toSeconds());
    assertTrue(hits.recipe().rounds() > 1);
    assertEquals("unbound", hits.baseline());
    assertEquals(List.of("unbound", "unbound-per-core", "shoal-memory", "shoal-lmdb-periodic", "knotd"),
        hits.members().stream().map(Member::name).toList());
    assertEquals(1, hits.members().get(0).config().getInt("threads"));
    assertEquals(MemberKind.KNOTD, hits.members().get(4).kind());
    assertFalse(hits.needsIsolation());

    Scenario churn = Scenario.load(CATALOG.resolve("query_path_churn.conf"));
    assertEquals(4096, churn.recipe().queries().names());
    assertEquals(2048, churn.recipe().maxEntries());
    assertEquals(60, churn.recipe().stubTtl().toSeconds());
    assertTrue(churn.recipe().rounds() > 1);
    assertEquals(List.of("unbound", "shoal-memory", "shoal-lmdb-periodic"),
        churn.members().stream().map(Member::name).toList());
    assertEquals("periodic", churn.members().get(2).config().getString("caches.answers.lmdb.sync"));
  }

  @Test
  void queryPathHitIsQueryPathsRecipeWithUnboundAndTheMemoryCacheWithItsDefaultSocketsAndOneInTwoRounds() {
    Recipe full = Scenario.load(CATALOG.resolve("query_path.conf")).recipe();
    Scenario hit = Scenario.load(CATALOG.resolve("query_path_hit.conf"));
    assertEquals(2, hit.recipe().rounds());
    // Everything but the rounds as in query_path, so its rows compare with query_path's.
    assertEquals(new Recipe(full.zone(), full.stubTtl(), full.queries(), full.ingressWorkers(), full.fill(),
        full.maxEntries(), full.whenFull(), full.shardCount(), full.mapSizeBytes(), full.syncInterval(),
        full.upstreamWorkers(), full.jvmOptions(), full.load(), full.quick(), 2, full.policyList(), full.signing(), full.cpuQuota(), full.cpuPeriod(), full.cpuQuotaAfterWarmup(), full.latencyPercentiles(), full.sideBySide()), hit.recipe());
    assertEquals("unbound", hit.baseline());
    assertEquals(List.of("unbound", "shoal-memory", "shoal-memory-1-socket"),
        hit.members().stream().map(Member::name).toList());
    assertEquals(1, hit.members().get(0).config().getInt("threads"));
    // one reading thread beside unbound's one thread
    assertEquals(1, hit.members().get(2).config().getInt("listen.udp_sockets"));
  }

  @Test
  void aPageOpensWithTheQuestionAndWhenItMattersOrTheDescription() {
    String base = MinimalRecipe.with() + "members = [{ name = a, kind = shoal }]\n";
    Scenario plain = Scenario.from("t", ConfigFactory.parseString(base + "description = \"warm hits\""));
    assertEquals(new StudyPage("warm hits", null, null), plain.page());
    Scenario asked = Scenario.from("t", ConfigFactory.parseString(base + "description = d, question = \"how fast?\","
        + " when_this_matters = \"always\", part_of = cluster_capacity"));
    assertEquals(new StudyPage("how fast?", "always", "cluster_capacity"), asked.page());
    String again = base.replace("members = [{ name = a, kind = shoal }]", "members = [{ name = a, kind = shoal },"
        + " { name = b, kind = shoal }, { name = c, kind = shoal, config { ingress.workers = 2 } }]");
    assertEquals(List.of("b"), Scenario.from("t", ConfigFactory.parseString(again + "repeats_baseline = [b]"))
        .page().repeats());
    for (String[] wrong : new String[][] {{"[c]", "'c' differs from the baseline a"}, {"[a]", "is the baseline itself"},
        {"[d]", "no member named 'd'"}}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Scenario.from("t",
          ConfigFactory.parseString(again + "repeats_baseline = " + wrong[0])));
      assertTrue(e.getMessage().startsWith("repeats_baseline: ") && e.getMessage().contains(wrong[1]), e.getMessage());
    }
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> Scenario.from("t",
        ConfigFactory.parseString(base + "part_of = \"../elsewhere\"")));
    assertTrue(bad.getMessage().startsWith("part_of:"), bad.getMessage());
    // the variants of the capacity study publish under it
    for (String variant : List.of("cluster_capacity_hit", "cluster_capacity_churn_rounds")) {
      assertEquals("cluster_capacity", Scenario.load(CATALOG.resolve(variant + ".conf")).page().partOf(), variant);
    }
    assertNull(Scenario.load(CATALOG.resolve("cluster_capacity.conf")).page().partOf());
  }

  @Test
  void typosAreRejectedWithTheKey() {
    String base = MinimalRecipe.with();
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
  void aJarOfItsOwnIsForAShoalMemberOfAPlainStudyAndAFileThatExists(@TempDir Path dir) throws IOException {
    Scenario s = Scenario.load(CATALOG.resolve("cache_churn.conf"));
    Path jar = Files.writeString(dir.resolve("before.jar"), "a jar");
    StudyRun.checkMemberJars(s, Map.of("lmdb-none", jar));
    ScenarioException unknown = assertThrows(ScenarioException.class,
        () -> StudyRun.checkMemberJars(s, Map.of("lmdb-nope", jar)));
    assertTrue(unknown.getMessage().contains("no member lmdb-nope") && unknown.getMessage().contains("lmdb-none"),
        unknown.getMessage());
    ScenarioException missing = assertThrows(ScenarioException.class,
        () -> StudyRun.checkMemberJars(s, Map.of("memory", dir.resolve("absent.jar"))));
    assertTrue(missing.getMessage().contains("absent.jar"), missing.getMessage());
    Scenario peers = Scenario.load(CATALOG.resolve("peers.conf"));
    Member unbound = peers.members().stream().filter(m -> m.kind() == MemberKind.UNBOUND).findFirst().orElseThrow();
    ScenarioException notShoal = assertThrows(ScenarioException.class,
        () -> StudyRun.checkMemberJars(peers, Map.of(unbound.name(), jar)));
    assertTrue(notShoal.getMessage().contains("only shoal members"), notShoal.getMessage());
    // the A/A member runs the baseline's jar
    Scenario withAa = Scenario.load(CATALOG.resolve("query_path_lmdb.conf"));
    ScenarioException aa = assertThrows(ScenarioException.class,
        () -> StudyRun.checkMemberJars(withAa, Map.of("shoal-memory-again", jar)));
    assertTrue(aa.getMessage().contains("repeats the baseline shoal-memory"), aa.getMessage());
    StudyRun.checkMemberJars(withAa, Map.of("shoal-memory-again", jar, "shoal-memory", jar));
    ScenarioException ownWay = assertThrows(ScenarioException.class, () -> StudyRun.checkMemberJars(
        Scenario.load(CATALOG.resolve("robustness.conf")), Map.of("shoal", jar)));
    StudyRun.checkMemberJars(Scenario.load(CATALOG.resolve("cache_memory.conf")), Map.of("shoal-memory", jar));
    assertTrue(ownWay.getMessage().contains("its own way"), ownWay.getMessage());
  }

  @Test
  void encryptedComparesShoalAndUnboundOverUdpDotAndDoh() {
    Scenario s = Scenario.load(CATALOG.resolve("encrypted.conf"));
    assertEquals("unbound-udp", s.baseline());
    for (MemberKind kind : List.of(MemberKind.UNBOUND, MemberKind.SHOAL)) {
      Set<Transport> transports = s.members().stream().filter(m -> m.kind() == kind).map(Member::transport)
          .collect(Collectors.toSet());
      assertEquals(EnumSet.of(Transport.UDP, Transport.DOT, Transport.DOH), transports, kind.configName());
    }
    // shoal's DoT member keeps its connections as unbound does; the default cap is measured beside it
    Member dot = s.members().stream().filter(m -> m.name().equals("shoal-dot")).findFirst().orElseThrow();
    assertEquals(0, dot.config().getInt("listen.tcp_max_queries"));
    assertTrue(s.recipe().rounds() > 1);
  }

  @Test
  void aTransportIsForOneShoalOrUnboundProcessInAPlainScenario() {
    String base = MinimalRecipe.with();
    Scenario ok = Scenario.from("t", ConfigFactory.parseString(base
        + "members = [{ name = a, kind = shoal, transport = doh }, { name = b, kind = unbound, transport = tcp },"
        + " { name = c, kind = knotd }]"));
    assertEquals(List.of(Transport.DOH, Transport.TCP, Transport.UDP),
        ok.members().stream().map(Member::transport).toList());
    for (String[] bad : new String[][] {
        {"members = [{ name = a, kind = shoal, transport = quic }]", "unknown transport 'quic'"},
        {"members = [{ name = a, kind = dnsmasq, transport = dot }]", "members[0].transport"},
        {"members = [{ name = a, kind = shoal, nodes = 3, transport = dot }]", "members[0].transport"}}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(base + bad[0])), bad[0]);
      assertTrue(e.getMessage().contains(bad[1]), e.getMessage());
    }
  }

  @Test
  void sideBySideTurnsAreForOneServerMembersOfAPlainStudyAndAllowMoreRounds() {
    String two = "members = [{ name = a, kind = shoal }, { name = b, kind = unbound }]";
    assertFalse(Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with("rounds = 2") + two))
        .recipe().sideBySide());
    Scenario sliced = Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with("turns = slices, rounds = 20")
        + two));
    assertTrue(sliced.recipe().sideBySide());
    assertEquals(20, sliced.recipe().rounds());
    for (String[] bad : new String[][] {
        {"turns = slice", two, "recipe.turns: runs"},
        {"turns = runs, rounds = 20", two, "recipe.rounds: from 1 to 9,"},
        {"turns = slices, rounds = 41", two, "recipe.rounds: from 1 to 40 with turns = slices"},
        {"turns = slices", "members = [{ name = a, kind = shoal }, { name = b, kind = shoal, nodes = 3 }]",
            "members[1]: with recipe.turns = slices"},
        {"turns = slices", "members = [{ name = a, kind = shoal }, { name = b, kind = shoal, pace { of = a, share = 0.5 } }]",
            "members[1]: with recipe.turns = slices"}}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with(bad[0]) + bad[1])), bad[0]);
      assertTrue(e.getMessage().contains(bad[2]), e.getMessage());
    }
  }

  @Test
  void clusterScenariosCompareOneNodeThreeIndependentNodesAndAThreeNodeCluster() {
    for (String name : List.of("cluster_churn", "cluster_hit")) {
      Scenario s = Scenario.load(CATALOG.resolve(name + ".conf"));
      assertTrue(s.hasNodeGroups(), name);
      assertEquals(3, s.maxNodes(), name);
      assertEquals(List.of("memory", "independent-3", "cluster-3"), s.members().stream().map(Member::name).toList());
      assertEquals(List.of(1, 3, 3), s.members().stream().map(Member::nodes).toList());
      assertEquals(List.of(false, false, true), s.members().stream().map(Member::cluster).toList());
      assertFalse(s.members().get(0).isNodeGroup());
      assertTrue(s.members().stream().allMatch(m -> m.kill() == null));
    }
    Scenario churn = Scenario.load(CATALOG.resolve("cluster_churn.conf"));
    Scenario plain = Scenario.load(CATALOG.resolve("cache_churn.conf"));
    assertEquals(plain.recipe().queries(), churn.recipe().queries());
    assertEquals(plain.recipe().maxEntries(), churn.recipe().maxEntries());
    assertEquals(plain.recipe().stubTtl(), churn.recipe().stubTtl());
    // the same dnsperf flags; cache_churn measures in 5 s turns side by side, cluster_churn in 30 s runs
    for (Scenario each : List.of(plain, churn)) {
      assertEquals(List.of(8, 200, 1), List.of(each.recipe().load().clients(), each.recipe().load().outstanding(),
          each.recipe().load().threads()), each.name());
    }
    Scenario hit = Scenario.load(CATALOG.resolve("cluster_hit.conf"));
    assertEquals(Scenario.load(CATALOG.resolve("cache_hit.conf")).recipe().queries(), hit.recipe().queries());
    assertFalse(plain.hasNodeGroups());
    assertEquals(1, plain.maxNodes());
  }

  @Test
  void theKillScenarioKillsOneNodeOfAThreeNodeClusterMidRun() {
    Scenario s = Scenario.load(CATALOG.resolve("cluster_kill.conf"));
    Member m = s.members().get(0);
    assertTrue(m.cluster());
    assertEquals(3, m.nodes());
    assertEquals(List.of(2), m.kill().nodes());
    assertTrue(m.kill().after(false).compareTo(s.recipe().load().duration()) < 0);
    assertTrue(m.kill().after(true).compareTo(s.recipe().quick().duration()) < 0);
    assertEquals(2, m.kill().queryTimeout().toSeconds());
  }

  @Test
  void theMinorityScenarioKillsTwoOfThreeNodesAndMeasuresTheSurvivorPastItsDowning() {
    Scenario s = Scenario.load(CATALOG.resolve("cluster_minority.conf"));
    Member m = s.members().get(0);
    assertTrue(m.cluster());
    assertEquals(3, m.nodes());
    assertEquals(List.of(1, 2), m.kill().nodes());
    assertTrue(m.kill().leavesMinority(m.nodes()));
    assertFalse(Scenario.load(CATALOG.resolve("cluster_kill.conf")).members().get(0).kill().leavesMinority(3));
    // The Split Brain Resolver downs the survivor about 25 s after the kill: the run must outlast that.
    Duration quickLeft = s.recipe().quick().duration().minus(m.kill().after(true));
    Duration fullLeft = s.recipe().load().duration().minus(m.kill().after(false));
    assertTrue(quickLeft.compareTo(Duration.ofSeconds(30)) >= 0, quickLeft.toString());
    assertTrue(fullLeft.compareTo(Duration.ofSeconds(30)) >= 0, fullLeft.toString());
    assertEquals(s.recipe().queries(), Scenario.load(CATALOG.resolve("cluster_kill.conf")).recipe().queries());
  }

  @Test
  void capacityPutsEveryNodeUnderAQuotaAndComparesWithinEachWorkload() {
    Scenario s = Scenario.load(CATALOG.resolve("cluster_capacity.conf"));
    assertEquals(0.25, s.recipe().cpuQuota());
    assertTrue(s.recipe().latencyPercentiles());
    assertTrue(s.recipe().cpuQuotaAfterWarmup(), "the nodes are measured warm");
    assertEquals(3, s.recipe().rounds(), "the goals are judged on the medians of three rounds");
    assertEquals(List.of("hit", "hit", "hit", "churn", "churn", "churn", "churn"),
        s.members().stream().map(Member::group).toList());
    for (String group : List.of("hit", "churn")) {
      List<Member> in = s.members().stream().filter(m -> group.equals(m.group())).toList();
      assertTrue(in.stream().anyMatch(m -> m.nodes() == 1 && !m.cluster()), group + ": one node");
      assertTrue(in.stream().anyMatch(m -> m.nodes() == 3 && m.cluster()), group + ": a 3-node cluster");
    }
    for (String group : List.of("hit", "churn")) {
      // three independent nodes: the reference for upstream queries, and for what the busier host costs
      assertTrue(s.members().stream().anyMatch(m -> group.equals(m.group()) && m.nodes() == 3 && !m.cluster()), group);
    }
    // the hit members hold every name; the churn members half of them
    for (Member m : s.members()) {
      long entries = m.config().hasPath("caches.answers.max_entries") ? m.config().getLong("caches.answers.max_entries")
          : s.recipe().maxEntries();
      assertEquals(m.group().equals("hit"), entries >= s.recipe().queries().names(), m.name());
    }
    // owner lookups' latency at 80% of the cluster's capacity, measured right after that capacity
    Member paced = s.members().get(6);
    assertEquals("churn-cluster-3-paced", paced.name());
    assertEquals(new Pace("churn-cluster-3", 0.8), paced.pace());
    assertEquals(3, paced.nodes());
    assertTrue(paced.cluster());
    assertEquals(Map.of("churn-cluster-3-paced", new Pace("churn-cluster-3", 0.8)), s.paces());
    assertTrue(s.members().stream().filter(m -> m != paced).allMatch(m -> m.pace() == null));
  }

  private static final String PACE_RECIPE = MinimalRecipe.with("dnsperf.duration = 20s", "quick.duration = 4s");

  @Test
  void aPaceSharesAnEarlierMembersQpsOverThePacedMembersNodes() {
    Scenario s = Scenario.from("t", ConfigFactory.parseString(PACE_RECIPE + "members = [{ name = full, kind = shoal,"
        + " nodes = 3, cluster = on }, { name = paced, kind = shoal, nodes = 3, cluster = on,"
        + " pace { of = full, share = 0.8 } }, { name = one, kind = shoal, pace { of = full, share = 1 } }]"));
    Pace pace = s.members().get(1).pace();
    assertEquals(new Pace("full", 0.8), pace);
    assertNull(s.members().get(0).pace());
    assertEquals(List.of("paced", "one"), List.copyOf(s.paces().keySet()));
    // each of the 3 dnsperf: 0.8 x 12,345.6 / 3 = 3,292.16
    assertEquals(3292, pace.maxQpsPerNode(12345.6, 3));
    assertEquals(3293, new Pace("full", 0.8).maxQpsPerNode(12348.0, 3)); // 3,292.8 rounds up
    assertEquals(12346, s.members().get(2).pace().maxQpsPerNode(12345.6, 1));
    // dnsperf takes a whole positive rate: never 0
    assertEquals(1, new Pace("full", 0.1).maxQpsPerNode(5, 3));
    // the pace is kept when the run rewrites a member
    assertEquals(pace, s.withPolicyListAt(Path.of("list.txt")).members().get(1).pace());
  }

  @Test
  void paceMistakesAreRejectedWithTheKey() {
    String full = "{ name = full, kind = shoal, nodes = 3, cluster = on }";
    List<String[]> bad = List.of(
        new String[] {full + ", { name = p, kind = shoal, pace { of = nobody, share = 0.8 } }",
            "members[1].pace.of: no member named 'nobody'"},
        new String[] {"{ name = p, kind = shoal, pace { of = full, share = 0.8 } }, " + full,
            "members[0].pace.of: full is listed after p"},
        new String[] {full + ", { name = p, kind = shoal, pace { of = p, share = 0.8 } }",
            "members[1].pace.of: a member cannot be paced by its own QPS"},
        new String[] {full + ", { name = p, kind = shoal, pace { of = full, share = 0 } }", "members[1].pace.share"},
        new String[] {full + ", { name = p, kind = shoal, pace { of = full, share = 1.2 } }", "members[1].pace.share"},
        new String[] {full + ", { name = p, kind = shoal, pace { of = full, share = -0.5 } }", "members[1].pace.share"},
        new String[] {full + ", { name = p, kind = shoal, pace { of = full, share = 0.8, qps = 10 } }",
            "members[1].pace.qps: unknown key"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(PACE_RECIPE + "members = [" + b[0] + "]")), b[0]);
      assertTrue(e.getMessage().contains(b[1]), b[1] + " in: " + e.getMessage());
    }
    // a missing share or reference is HOCON's own error, naming the key
    com.typesafe.config.ConfigException missing = assertThrows(com.typesafe.config.ConfigException.class,
        () -> Scenario.from("t", ConfigFactory.parseString(PACE_RECIPE + "members = [" + full
            + ", { name = p, kind = shoal, pace { of = full } }]")));
    assertTrue(missing.getMessage().contains("share"), missing.getMessage());
  }

  @Test
  void aShoalMemberMayAddJvmOptionsToTheRecipes() {
    String recipe = MinimalRecipe.with("jvm_options = [\"-Xmx64m\"]", "dnsperf.duration = 20s", "quick.duration = 4s");
    Scenario ok = Scenario.from("t", ConfigFactory.parseString(recipe
        + "members = [{ name = a, kind = shoal }, { name = c1, kind = shoal, jvm_options = [\"-XX:TieredStopAtLevel=1\"] }]"));
    assertEquals(List.of(), ok.members().get(0).jvmOptions());
    assertEquals(List.of("-XX:TieredStopAtLevel=1"), ok.members().get(1).jvmOptions());
    for (String[] b : List.of(
        new String[] {"members = [{ name = u, kind = unbound, jvm_options = [\"-Xmx1g\"] }]",
            "members[0].jvm_options: only shoal members"},
        new String[] {"members = [{ name = a, kind = shoal, jvm_options = [\"Xmx1g\"] }]",
            "members[0].jvm_options: each is one JVM option starting with '-', is 'Xmx1g'"})) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(recipe + b[0])), b[0]);
      assertTrue(e.getMessage().contains(b[1]), b[1] + " in: " + e.getMessage());
    }
  }

  @Test
  void aCpuQuotaIsForShoalMembersAndAPositiveShareOfACpu() {
    String shoal = "members = [{ name = a, kind = shoal }]";
    Scenario ok = quota("members = [{ name = a, kind = shoal, group = g }]", "cpu_quota = 0.3");
    assertEquals(0.3, ok.recipe().cpuQuota());
    assertFalse(ok.recipe().cpuQuotaAfterWarmup(), "the quota applies from the JVM's start unless told otherwise");
    assertFalse(ok.recipe().latencyPercentiles());
    assertEquals(java.time.Duration.ofMillis(100), ok.recipe().cpuPeriod(), "the kernel's period unless told otherwise");
    assertEquals(java.time.Duration.ofMillis(5),
        quota(shoal, "cpu_quota = 0.3", "cpu_period = 5ms").recipe().cpuPeriod());
    assertTrue(quota(shoal, "cpu_quota = 0.3", "cpu_quota_from = measured").recipe().cpuQuotaAfterWarmup());
    assertEquals("g", ok.members().get(0).group());
    assertNull(quota(shoal).recipe().cpuQuota());
    List<String[]> bad = List.of(
        new String[] {"cpu_quota = 0", shoal, "recipe.cpu_quota"},
        new String[] {"cpu_quota = 65", shoal, "recipe.cpu_quota"},
        new String[] {"cpu_quota = 0.5", "members = [{ name = u, kind = unbound }]", "members[0].kind"},
        new String[] {"", "members = [{ name = u, kind = unbound, group = g }]", "members[0].group"},
        new String[] {"cpu_quota = 0.5, cpu_quota_from = later", shoal, "recipe.cpu_quota_from"},
        new String[] {"cpu_quota_from = measured", shoal, "recipe.cpu_quota_from"},
        new String[] {"cpu_period = 10ms", shoal, "recipe.cpu_period"},
        // 0.3 CPU of 2 ms is 0.6 ms, under the kernel's smallest quota
        new String[] {"cpu_quota = 0.3, cpu_period = 2ms", shoal, "recipe.cpu_period: a quota of 0.3 CPU"},
        new String[] {"cpu_quota = 0.3, cpu_period = 2s", shoal, "recipe.cpu_period: a CFS period from 1 ms to 1 s"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> quota(b[1], b[0]), b[0]);
      assertTrue(e.getMessage().contains(b[2]), b[2] + " in: " + e.getMessage());
    }
  }

  /** A scenario of the minimal recipe run for 20 s (4 s quick) with these keys, and these members. */
  private static Scenario quota(String members, String... keys) {
    String[] overrides = Stream.concat(Stream.of("dnsperf.duration = 20s", "quick.duration = 4s"),
        Stream.of(keys)).toArray(String[]::new);
    return Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with(overrides) + members));
  }

  @Test
  void nodeGroupMistakesAreRejectedWithTheKey() {
    String base = MinimalRecipe.with("dnsperf.duration = 20s", "quick.duration = 4s");
    Scenario ok = Scenario.from("t", ConfigFactory.parseString(base + "members = [{ name = a, kind = shoal },"
        + " { name = c, kind = shoal, nodes = 3, cluster = on, kill { after = 5s, quick_after = 3s } }]"));
    assertEquals(List.of(2), ok.members().get(1).kill().nodes()); // the last node by default
    StudyRun.checkShoalMembers(ok);
    List<String[]> bad = List.of(
        new String[] {"{ name = u, kind = unbound, nodes = 3 }", "members[0].nodes"},
        new String[] {"{ name = s, kind = shoal, nodes = 0 }", "members[0].nodes"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = off, kill { after = 5s } }", "cluster = on"},
        new String[] {"{ name = s, kind = shoal, nodes = 2, cluster = on, kill { after = 5s } }", "at least 3 nodes"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { node = 3, after = 5s } }",
            "members[0].kill.node"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { nodes = [0, 1, 2], after = 5s,"
            + " quick_after = 3s } }", "members[0].kill.nodes"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { nodes = [1, 1], after = 5s,"
            + " quick_after = 3s } }", "members[0].kill.nodes"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { nodes = [1, 3], after = 5s,"
            + " quick_after = 3s } }", "members[0].kill.nodes: from 0 to 2"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { node = 1, nodes = [2], after = 5s,"
            + " quick_after = 3s } }", "not both"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { after = 20s } }",
            "members[0].kill.after"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { after = 5s } }",
            "members[0].kill.quick_after"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { after = 5s, quick_after = 3s,"
            + " sigal = 9 } }", "members[0].kill.sigal"},
        new String[] {"{ name = s, kind = shoal, nodes = 3, cluster = on, kill { after = 5s, quick_after = 3s } },"
            + " { name = t, kind = shoal, nodes = 3, cluster = on, kill { after = 5s, quick_after = 3s } }",
            "only one member"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(base + "members = [" + b[0] + "]")), b[0]);
      assertTrue(e.getMessage().contains(b[1]), b[1] + " in: " + e.getMessage());
    }
  }

  @Test
  void robustnessRunsOneShoalWhoseHostileProfileIsAValidConfiguration() {
    Scenario s = Scenario.load(CATALOG.resolve("robustness.conf"));
    AttackPlan plan = s.attacks();
    assertEquals(List.of("shoal-memory", "unbound"), s.members().stream().map(Member::name).toList());
    assertEquals("hostile.test.", plan.hostileZone());
    assertTrue(plan.dripConnections() + plan.idleConnections() <= AttackPlan.MAX_CONNECTIONS);
    // the holders outnumber the member's connection cap, and the drip phase stays under it
    int cap = s.members().get(0).config().getInt("listen.tcp_max_connections");
    assertTrue(plan.holderEmptyConnections() + plan.holderIdleConnections() > cap);
    assertTrue(plan.dripConnections() + plan.idleConnections() < cap);
    Member m = s.members().get(0);
    Member hostile = new Member(m.name(), m.kind(), AttackMemberConfig.withHostileProfile(m.config(), plan,
        new java.net.InetSocketAddress("127.0.0.1", 5399)));
    io.shoal.config.ShoalConfig c = ShoalMemberConfig.validate(hostile, ShoalMemberConfig.render(ShoalMemberConfig.memberConfig(
        s.recipe(), hostile, 5351, 9101, 8561, new java.net.InetSocketAddress("127.0.0.1", 5300), Path.of("data"),
        null)));
    assertTrue(c.profiles().stream().anyMatch(p -> p.name().equals("hostile") && p.upstreams().equals("hostile")),
        c.profiles().toString());
    assertTrue(c.profiles().stream().anyMatch(p -> p.name().equals("default")), c.profiles().toString());
  }

  @Test
  void robustnessHoldsTheDotAndDohPortsWithMoreSilentConnectionsThanTheCapInShortPhases() {
    Scenario s = Scenario.load(CATALOG.resolve("robustness.conf"));
    AttackPlan plan = s.attacks();
    int cap = s.members().get(0).config().getInt("listen.tcp_max_connections");
    assertEquals(1300, plan.encryptedHolders());
    assertTrue(plan.encryptedHolders() > cap);
    assertEquals(java.time.Duration.ofSeconds(10), plan.encryptedDuration());
    // each stream after its baseline, the UDP phases as before
    assertEquals(List.of("baseline", "tcp_baseline", "tcp_holders", "dot_baseline", "dot_holders", "doh_baseline",
        "doh_holders", "malformed_udp", "tcp_drip_idle", "miss_flood", "miss_flood_spread", "hostile_upstream"),
        plan.phases().stream().map(AttackPlan.Phase::configName).toList());
    assertEquals(AttackPlan.Phase.DOT_BASELINE, AttackPlan.Phase.DOT_HOLDERS.baseline());
    assertEquals(AttackPlan.Phase.DOH_BASELINE, AttackPlan.Phase.DOH_HOLDERS.baseline());
    assertEquals(Transport.DOH, AttackPlan.Phase.DOH_HOLDERS.transport());
    assertEquals(null, AttackPlan.Phase.MISS_FLOOD.transport());
  }

  @Test
  void withoutEncryptedHoldersTheDotAndDohPhasesDoNotRunAndABadBlockNamesItsKey() {
    String recipe = MinimalRecipe.with() + "members = [{ name = a, kind = shoal }]\n";
    String attacks = "attacks { malformed_udp { packets_per_second = 10 }, tcp { drip_connections = 1, "
        + "idle_connections = 1 }, tcp_holders { zero_length_connections = 1, idle_connections = 1 }, "
        + "miss_flood { times_baseline = 3, max_packets_per_second = 10 }, "
        + "hostile_upstream { zone = \"hostile.test.\", queries_per_second = 10, timeout = 500ms }";
    AttackPlan without = Scenario.from("t", ConfigFactory.parseString(recipe + attacks + " }")).attacks();
    assertEquals(0, without.encryptedHolders());
    assertEquals(8, without.phases().size());
    assertTrue(without.phases().stream().noneMatch(p -> p.configName().startsWith("do")), without.phases().toString());
    AttackPlan with = Scenario.from("t", ConfigFactory.parseString(recipe + attacks
        + ", encrypted_holders { connections = 5, duration = 2s } }")).attacks();
    assertEquals(5, with.encryptedHolders());
    assertEquals(12, with.phases().size());
    List<String[]> bad = List.of(
        new String[] {"encrypted_holders { connections = 0, duration = 2s }",
            "attacks.encrypted_holders.connections: from 1 to 8000, is 0"},
        new String[] {"encrypted_holders { connections = 5, duration = 500ms }",
            "attacks.encrypted_holders.duration: from 1s to 120s"},
        new String[] {"encrypted_holders { connections = 5, duration = 2s, handshake = yes }",
            "attacks.encrypted_holders.handshake"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(recipe + attacks + ", " + b[0] + " }")), b[0]);
      assertTrue(e.getMessage().contains(b[1]), b[1] + " in: " + e.getMessage());
    }
  }

  @Test
  void robustnessPacesTheHonestClientsAndRunsUnboundWithItsZoneBudgetBesideShoal() {
    Scenario s = Scenario.load(CATALOG.resolve("robustness.conf"));
    AttackPlan plan = s.attacks();
    // well under the ~72k the 2-core host serves unpaced; the flood at five times that
    assertEquals(10000, plan.honestQps());
    assertEquals(5000, plan.honestOutstanding());
    assertEquals(5.0, plan.missTimesBaseline());
    assertEquals(100000, plan.missMaxPerSecond());
    // more than a 257th of the zone budget (the spread flood's 256 sources and itself): 3000 / 257 < 20
    assertEquals(20, plan.zoneClientQps());
    assertTrue(plan.zoneClientQps() > s.members().get(0).config().getInt("miss_budget.per_zone") / 257.0);
    // the recipe's load itself is not paced: only the robustness phases apply honest_qps
    assertNull(s.recipe().load().maxQps());
    Member unbound = s.members().get(1);
    assertEquals(MemberKind.UNBOUND, unbound.kind());
    assertEquals(1, unbound.config().getInt("threads"));
    // ratelimit leaves forwarders out: the zone budget needs knotd as a stub
    assertTrue(unbound.config().getBoolean(Member.UNBOUND_STUB_ZONE));
    assertTrue(unbound.config().getStringList("extra").contains("ratelimit: 3000"),
        unbound.config().getStringList("extra").toString());
    assertTrue(unbound.config().getStringList("extra").contains("incoming-num-tcp: 1024"));
    assertFalse(unbound.config().getStringList("extra").stream().anyMatch(l -> l.startsWith("ip-ratelimit")),
        "ip-ratelimit counts hits too (before the cache): not the equivalent of a miss budget");
    assertEquals(s.members().get(0).config().getInt("miss_budget.per_zone"), 3000);
  }

  @Test
  void honestQpsIsCheckedWithAClearMessage() {
    String attacks = "attacks { malformed_udp { packets_per_second = 10 }, tcp { drip_connections = 1, "
        + "idle_connections = 1 }, tcp_holders { zero_length_connections = 1, idle_connections = 1 }, "
        + "miss_flood { times_baseline = 5, max_packets_per_second = 100000 }, hostile_upstream { zone = "
        + "\"hostile.test.\", queries_per_second = 10, timeout = 500ms } }";
    String members = "members = [{ name = a, kind = shoal }, { name = u, kind = unbound, config { stub_zone = on } }]\n";
    Scenario paced = Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with("dnsperf.honest_qps = 2000")
        + members + attacks));
    assertEquals(2000, paced.attacks().honestQps());
    assertTrue(paced.attacks().paced());
    Scenario unpaced = Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with() + members + attacks));
    assertNull(unpaced.attacks().honestQps());
    assertFalse(unpaced.attacks().paced());
    List<String[]> bad = List.of(
        new String[] {MinimalRecipe.with("dnsperf.honest_qps = 0") + members + attacks,
            "recipe.dnsperf.honest_qps: the rate the honest clients ask at in every UDP phase (dnsperf -Q), from 1 to"},
        new String[] {MinimalRecipe.with("dnsperf.honest_qps = -5") + members + attacks, "is -5"},
        new String[] {MinimalRecipe.with("dnsperf.honest_outstanding = 500") + members + attacks,
            "recipe.dnsperf.honest_outstanding: the outstanding queries of the paced honest clients; set honest_qps"},
        new String[] {MinimalRecipe.with("dnsperf.honest_qps = 10, dnsperf.honest_outstanding = 0") + members + attacks,
            "recipe.dnsperf.honest_outstanding: dnsperf -q in the paced phases, from 1 to 65535; is 0"},
        new String[] {MinimalRecipe.with("dnsperf.honest_qps = 1000000") + members + attacks, "from 1 to 200000"},
        new String[] {MinimalRecipe.with("dnsperf.honest_qps = 100") + "members = [{ name = a, kind = shoal }]",
            "recipe.dnsperf.honest_qps: paces the honest clients of the robustness phases; this scenario has no "
                + "attacks block"},
        new String[] {MinimalRecipe.with() + "members = [{ name = u, kind = unbound }, { name = a, kind = shoal }]\n"
            + attacks, "attacks: the first member of a robustness scenario is the shoal under test"},
        new String[] {MinimalRecipe.with() + "members = [{ name = a, kind = shoal }, { name = k, kind = kresd }]\n"
            + attacks, "members[1].kind: a robustness scenario measures shoal and unbound members only"},
        new String[] {MinimalRecipe.with() + "members = [{ name = a, kind = shoal }, { name = u, kind = unbound, "
            + "transport = tcp }]\n" + attacks, "members[1].transport"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(b[0])), b[0]);
      assertTrue(e.getMessage().contains(b[1]), b[1] + " in: " + e.getMessage());
    }
  }

  @Test
  void aBadAttacksBlockIsRejectedWithTheKey() {
    String recipe = MinimalRecipe.with();
    String one = "members = [{ name = a, kind = shoal }]\n";
    String tcp = "tcp { drip_connections = 1, idle_connections = 1 }, "
        + "tcp_holders { zero_length_connections = 1, idle_connections = 1 }";
    String miss = "miss_flood { times_baseline = 3, max_packets_per_second = 10 }";
    String hostile = "hostile_upstream { zone = \"hostile.test.\", queries_per_second = 10, timeout = 500ms }";
    String malformed = "malformed_udp { packets_per_second = 10 }";
    AttackPlan plain = Scenario.from("t", ConfigFactory.parseString(recipe + one + "attacks { " + malformed + ", "
        + tcp + ", " + miss + ", " + hostile + " }")).attacks();
    assertEquals(10, plain.malformedPerSecond());
    // the zone client: 20 a second unless set, 0 for none
    assertEquals(20, plain.zoneClientQps());
    for (int qps : new int[] {0, 1, 50, 10_000}) {
      assertEquals(qps, Scenario.from("t", ConfigFactory.parseString(recipe + one + "attacks { " + malformed + ", "
          + tcp + ", " + miss.replace(" }", ", zone_client_qps = " + qps + " }") + ", " + hostile + " }"))
          .attacks().zoneClientQps());
    }
    List<String[]> bad = List.of(
        new String[] {one + "attacks { malformed_udp { packets_per_second = 0 }, " + tcp + ", " + miss + ", "
            + hostile + " }", "attacks.malformed_udp.packets_per_second"},
        new String[] {one + "attacks { " + malformed + ", tcp { drip_connections = 5000, idle_connections = 5000 }, "
            + "tcp_holders { zero_length_connections = 1, idle_connections = 1 }, " + miss + ", " + hostile + " }",
            "drip_connections + idle_connections"},
        new String[] {one + "attacks { " + malformed + ", tcp { drip_connections = 1, idle_connections = 1 }, "
            + "tcp_holders { zero_length_connections = 5000, idle_connections = 5000 }, " + miss + ", " + hostile
            + " }", "attacks.tcp_holders: zero_length_connections + idle_connections"},
        new String[] {one + "attacks { " + malformed + ", " + tcp + ", " + miss + ", hostile_upstream { zone = "
            + "\"Hostile\", queries_per_second = 1, timeout = 1s } }", "attacks.hostile_upstream.zone"},
        new String[] {one + "attacks { " + malformed + ", " + tcp + ", " + miss + ", " + hostile + ", slowloris {} }",
            "attacks.slowloris"},
        new String[] {one + "attacks { " + malformed + ", " + tcp + ", "
            + miss.replace(" }", ", zone_client_qps = -1 }") + ", " + hostile + " }",
            "attacks.miss_flood.zone_client_qps: queries a second of the client asking new names of the flooded zone, "
                + "from 1 to 10000, or 0 for none; is -1"},
        new String[] {one + "attacks { " + malformed + ", " + tcp + ", "
            + miss.replace(" }", ", zone_client_qps = 10001 }") + ", " + hostile + " }",
            "attacks.miss_flood.zone_client_qps: queries a second of the client asking new names of the flooded zone, "
                + "from 1 to 10000, or 0 for none; is 10001"},
        new String[] {one + "attacks { " + malformed + ", " + tcp + ", " + miss.replace(" }", ", zone_client = 5 }")
            + ", " + hostile + " }", "attacks.miss_flood.zone_client: unknown key; allowed here: max_packets_per_second, "
                + "times_baseline, zone_client_qps"},
        new String[] {"members = [{ name = a, kind = shoal, nodes = 2 }]\nattacks { " + malformed
            + ", " + tcp + ", " + miss + ", " + hostile + " }", "members[0]: a robustness member is one server"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(recipe + b[0])), b[0]);
      assertTrue(e.getMessage().contains(b[1]), b[1] + " in: " + e.getMessage());
    }
  }

  @Test
  void upstreamOutageStopsKnotdMidRunUnderThreeShoalMembers() {
    Scenario s = Scenario.load(CATALOG.resolve("upstream_outage.conf"));
    assertEquals(List.of("stale-on", "stale-off", "prefetch-off"), s.members().stream().map(Member::name).toList());
    assertEquals("serve-stale on, prefetch on", OutageSummary.features(s.members().get(0)));
    assertEquals("serve-stale off, prefetch on", OutageSummary.features(s.members().get(1)));
    assertEquals("serve-stale on, prefetch off", OutageSummary.features(s.members().get(2)));
    assertEquals(60, s.recipe().stubTtl().toSeconds());
    // every name fits: expired answers stay in the cache to be served stale
    assertTrue(s.recipe().maxEntries() >= s.recipe().queries().names());
    assertTrue(s.outage().fillSpread().compareTo(s.recipe().stubTtl()) < 0);
    assertEquals(20, s.outage().after(false).toSeconds());
    assertEquals(20, s.outage().length(false).toSeconds());
    assertEquals(2, s.outage().queryTimeout().toSeconds());
    assertTrue(s.outage().length(true).toSeconds() >= 3);
  }

  @Test
  void outageMistakesAreRejectedWithTheKey() {
    String base = MinimalRecipe.with("stub_ttl = 10s", "max_entries = 8", "dnsperf.duration = 20s", "quick.duration = 8s");
    String members = "members = [{ name = a, kind = shoal }]\n";
    Scenario ok = Scenario.from("t", ConfigFactory.parseString(base + members
        + "outage { fill_spread = 5s, after = 5s, length = 5s, quick_after = 2s, quick_length = 3s }"));
    assertEquals(3, ok.outage().length(true).toSeconds());
    assertEquals(2, ok.outage().queryTimeout().toSeconds());
    List<String[]> bad = List.of(
        new String[] {members + "outage { fill_spread = 10s, after = 5s, length = 5s, quick_after = 2s }",
            "outage.fill_spread"},
        new String[] {members + "outage { fill_spread = 5s, after = 1s, length = 5s, quick_after = 2s }",
            "outage.after"},
        new String[] {members + "outage { fill_spread = 5s, after = 10s, length = 10s, quick_after = 2s }",
            "outage.after + outage.length"},
        new String[] {members + "outage { fill_spread = 5s, after = 5s, length = 5s }", "outage.quick_after"},
        new String[] {members + "outage { fill_spread = 5s, after = 5s, length = 5s, quick_after = 2s, "
            + "query_timeout = 1500ms }", "outage.query_timeout"},
        new String[] {members + "outage { fill_spread = 5s, after = 5s, length = 5s, quick_after = 2s, lenght = 1s }",
            "outage.lenght"},
        new String[] {"members = [{ name = k, kind = knotd }]\n"
            + "outage { fill_spread = 5s, after = 5s, length = 5s, quick_after = 2s, quick_length = 3s }",
            "shoal of one node"},
        // the outage timeline runs every member alike: a pace would go unused
        new String[] {"members = [{ name = a, kind = shoal }, { name = b, kind = shoal, pace { of = a, share = 0.5 } }]"
            + "\noutage { fill_spread = 5s, after = 5s, length = 5s, quick_after = 2s, quick_length = 3s }",
            "without a kill or pace block"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString(base + b[0])), b[0]);
      assertTrue(e.getMessage().contains(b[1]), b[1] + " in: " + e.getMessage());
    }
  }

  @Test
  void clusterNodesGetTheirOwnPortsAndEveryContactPoint() {
    Scenario s = Scenario.load(CATALOG.resolve("cluster_churn.conf"));
    Member cluster = s.members().get(2);
    ClusterPlacement p = new ClusterPlacement("node-1", 2552, 8568, List.of(8558, 8568, 8578));
    com.typesafe.config.Config c = ShoalMemberConfig.memberConfig(s.recipe(), cluster, 5351, 9101, 8561,
        new java.net.InetSocketAddress("127.0.0.1", 5300), Path.of("data"), p);
    assertEquals("127.0.0.1:5351", c.getString("shoal.listen.udp"));
    assertEquals(9101, c.getInt("shoal.metrics.prometheus.port"));
    assertEquals(8561, c.getInt("shoal.admin.port"));
    assertTrue(c.getBoolean("shoal.cluster.enabled"));
    assertEquals("node-1", c.getString("shoal.cluster.node_name"));
    assertEquals(2552, c.getInt("shoal.cluster.remoting.port"));
    assertEquals(8568, c.getInt("shoal.cluster.management.port"));
    assertEquals(List.of("127.0.0.1:8558", "127.0.0.1:8568", "127.0.0.1:8578"),
        c.getStringList("shoal.cluster.discovery.contact_points"));
    assertEquals(3, c.getInt("shoal.cluster.discovery.required_contact_points"));
    ShoalMemberConfig.validate(cluster, ShoalMemberConfig.render(c));
    com.typesafe.config.Config independent = ShoalMemberConfig.memberConfig(s.recipe(), s.members().get(1), 5351, 9101,
        8561, new java.net.InetSocketAddress("127.0.0.1", 5300), Path.of("data"), null);
    assertFalse(independent.hasPath("shoal.cluster"));
    assertEquals(8561, independent.getInt("shoal.admin.port"));
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

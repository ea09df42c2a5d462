package io.shoal.study.scenario;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import io.shoal.policy.PolicyAction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * A study recipe and the members measured under it, read from one HOCON file of the catalog.
 *
 * @param source the file it was read from, copied into each run directory; null if built in code
 * @param attacks the robustness phases its one shoal member is measured under; null for a plain study
 * @param outage the upstream-outage test every member runs instead of the plain measured run, or null
 * @param cacheMemory the memory-per-answer test every member runs at each cache size instead of the
 *     plain measured run, or null
 * @param page the question and "when this matters" its page opens with, and the study it is a variant of
 */
public record Scenario(
    String name, String description, String baseline, Recipe recipe, List<Member> members, Path source,
    AttackPlan attacks, OutagePlan outage, CacheMemoryPlan cacheMemory, StudyPage page) {

  private static final Set<String> TOP = Set.of(
      "description", "baseline", "recipe", "members", "attacks", "outage", "cache_memory", "question",
      "when_this_matters", "part_of");
  private static final Set<String> RECIPE = Set.of(
      "zone", "stub_ttl", "queries", "ingress_workers", "fill", "max_entries", "when_full", "shard_count",
      "map_size", "sync_interval", "upstream_workers", "jvm_options", "dnsperf", "quick", "rounds", "policy_list",
      "dnssec", "cpu_quota", "cpu_period", "cpu_quota_from", "latency_percentiles");
  /** Rounds a scenario may ask for: each one runs every member again. */
  static final int MAX_ROUNDS = 9;
  private static final Set<String> QUERIES = Set.of("names", "lines", "seed");
  private static final Set<String> DNSPERF = Set.of("clients", "outstanding", "threads", "duration", "warmup",
      "honest_qps", "honest_outstanding");
  private static final Set<String> QUICK = Set.of("duration", "warmup");
  private static final Set<String> POLICY_LIST = Set.of("names", "quick_names", "seed");
  private static final Set<String> MEMBER = Set.of("name", "kind", "config", "nodes", "cluster", "kill",
      "policy_list", "transport", "group", "pace");
  private static final Set<String> KILL = Set.of("node", "nodes", "after", "quick_after", "query_timeout");
  /** dnsperf's most outstanding queries (-q). */
  static final int MAX_OUTSTANDING = 65_535;
  /** More shoal processes than this on one host measure the host, not shoal. */
  static final int MAX_NODES = 9;

  /** True if any member runs as a group of shoal nodes, so the run also writes cluster.csv. */
  public boolean hasNodeGroups() {
    return members.stream().anyMatch(Member::isNodeGroup);
  }

  /** The pace of each paced member, by name, in the scenario's order; empty when none is paced. */
  public Map<String, Pace> paces() {
    Map<String, Pace> paces = new LinkedHashMap<>();
    members.stream().filter(m -> m.pace() != null).forEach(m -> paces.put(m.name(), m.pace()));
    return paces;
  }

  /** The most nodes any member runs: how many query files (one per node) the run writes. */
  public int maxNodes() {
    return members.stream().mapToInt(Member::nodes).max().orElse(1);
  }

  /** True if any member loads the run's generated domain list, which the run then writes. */
  public boolean usesPolicyList() {
    return members.stream().anyMatch(m -> m.policyList() != null);
  }

  /** This scenario with the generated domain list, written at {@code file}, in its members' configurations. */
  public Scenario withPolicyListAt(Path file) {
    return new Scenario(name, description, baseline, recipe, members.stream().map(m -> m.withPolicyListAt(file)).toList(),
        source, attacks, outage, cacheMemory, page);
  }

  /** True if any member sends queries of its own and so must run without a route off loopback. */
  public boolean needsIsolation() {
    return members.stream().anyMatch(m -> m.kind().sendsOwnQueries());
  }

  /**
   * Finds a scenario by name in the catalog directory ({@code NAME.conf}), or takes a path to a
   * .conf file as given.
   */
  public static Path locate(String nameOrFile, Path catalog) {
    Path asFile = Path.of(nameOrFile);
    if (nameOrFile.endsWith(".conf") && Files.isRegularFile(asFile)) {
      return asFile;
    }
    Path inCatalog = catalog.resolve(nameOrFile + ".conf");
    if (Files.isRegularFile(inCatalog)) {
      return inCatalog;
    }
    throw new ScenarioException("no scenario '" + nameOrFile + "' in " + catalog + "; the catalog has: "
        + String.join(", ", names(catalog)));
  }

  /** The scenario names in a catalog directory, sorted. */
  public static List<String> names(Path catalog) {
    if (!Files.isDirectory(catalog)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(catalog)) {
      return files.map(p -> p.getFileName().toString())
          .filter(f -> f.endsWith(".conf"))
          .map(f -> f.substring(0, f.length() - ".conf".length()))
          .sorted().toList();
    } catch (IOException e) {
      throw new ScenarioException("cannot list " + catalog + ": " + e.getMessage());
    }
  }

  /** Reads and checks a scenario file; the error names the file and key at fault. */
  public static Scenario load(Path file) {
    String fileName = file.getFileName().toString();
    String name = fileName.endsWith(".conf") ? fileName.substring(0, fileName.length() - 5) : fileName;
    Config c;
    try {
      c = ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setAllowMissing(false)).resolve();
    } catch (ConfigException e) {
      throw new ScenarioException(file + ": " + e.getMessage());
    }
    try {
      return from(name, c, file);
    } catch (ConfigException | IllegalArgumentException e) {
      throw new ScenarioException(file + ": " + e.getMessage());
    }
  }

  /** The scenario {@code name} read from {@code c}, with no source file to copy into the run. */
  public static Scenario from(String name, Config c) {
    return from(name, c, null);
  }

  private static Scenario from(String name, Config c, Path source) {
    allowOnly(c, "", TOP);
    Config r = c.getConfig("recipe");
    allowOnly(r, "recipe.", RECIPE);
    Config q = r.getConfig("queries");
    allowOnly(q, "recipe.queries.", QUERIES);
    Config d = r.getConfig("dnsperf");
    allowOnly(d, "recipe.dnsperf.", DNSPERF);
    Config quick = r.getConfig("quick");
    allowOnly(quick, "recipe.quick.", QUICK);

    String zone = r.getString("zone");
    LoadSettings load = new LoadSettings(
        positive(d, "clients"), positive(d, "outstanding"), positive(d, "threads"),
        d.getDuration("duration"), d.getDuration("warmup"), null);
    if (load.duration().compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("recipe.dnsperf.duration: at least 1s (dnsperf -l counts seconds)");
    }
    int rounds = r.hasPath("rounds") ? r.getInt("rounds") : 1;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
      throw new IllegalArgumentException("recipe.rounds: from 1 to " + MAX_ROUNDS + ", is " + rounds);
    }
    Recipe recipe = new Recipe(
        zone,
        r.getDuration("stub_ttl"),
        new QueryFile(zone, positive(q, "names"), positive(q, "lines"), q.getLong("seed")),
        positive(r, "ingress_workers"),
        r.getString("fill"),
        r.getLong("max_entries"),
        r.getString("when_full"),
        positive(r, "shard_count"),
        r.getBytes("map_size"),
        r.getDuration("sync_interval"),
        positive(r, "upstream_workers"),
        List.copyOf(r.getStringList("jvm_options")),
        load,
        load.shortened(quick.getDuration("duration"), quick.getDuration("warmup")),
        rounds,
        r.hasPath("policy_list") ? policyList(r.getConfig("policy_list")) : null,
        r.hasPath("dnssec") ? Signing.from(r.getConfig("dnssec")) : null,
        cpuQuota(r),
        cpuPeriod(r),
        cpuQuotaAfterWarmup(r),
        r.hasPath("latency_percentiles") && r.getBoolean("latency_percentiles"));

    List<Member> members = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    List<? extends Config> list = c.getConfigList("members");
    // a pace block names an earlier member; the whole order tells "listed later" from "no such member"
    List<String> order = list.stream()
        .map(m -> m.hasPath("name") ? String.valueOf(m.getValue("name").unwrapped()) : "").toList();
    for (int i = 0; i < list.size(); i++) {
      Config m = list.get(i);
      String at = "members[" + i + "].";
      allowOnly(m, at, MEMBER);
      String memberName = m.getString("name");
      if (!memberName.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
        throw new IllegalArgumentException(at + "name: letters, digits, '.', '_' and '-' only (it names a directory): "
            + memberName);
      }
      if (!seen.add(memberName)) {
        throw new IllegalArgumentException(at + "name: '" + memberName + "' is used twice");
      }
      MemberKind kind = MemberKind.named(m.getString("kind"));
      Config deltas = m.hasPath("config") ? m.getConfig("config") : ConfigFactory.empty();
      if (kind != MemberKind.SHOAL) {
        allowOnly(deltas, at + "config.", kind.peerSettings());
      }
      int nodes = m.hasPath("nodes") ? m.getInt("nodes") : 1;
      boolean cluster = m.hasPath("cluster") && m.getBoolean("cluster");
      if (nodes < 1 || nodes > MAX_NODES) {
        throw new IllegalArgumentException(at + "nodes: from 1 to " + MAX_NODES + ", is " + nodes);
      }
      if (kind != MemberKind.SHOAL && (nodes != 1 || cluster)) {
        throw new IllegalArgumentException(at + (nodes != 1 ? "nodes" : "cluster")
            + ": only shoal members run as several nodes or as a cluster");
      }
      KillPlan kill = m.hasPath("kill") ? kill(m.getConfig("kill"), at + "kill.", nodes, cluster, load,
          quick.getDuration("duration")) : null;
      if (kill != null && rounds > 1) {
        throw new IllegalArgumentException(at + "kill: the kill test runs once; recipe.rounds must be 1");
      }
      if (kill != null && members.stream().anyMatch(x -> x.kill() != null)) {
        throw new IllegalArgumentException(at + "kill: only one member of a scenario may run the kill test "
            + "(it writes the run's kill_timeline.csv)");
      }
      String policyList = null;
      if (m.hasPath("policy_list")) {
        policyList = m.getString("policy_list");
        if (kind != MemberKind.SHOAL || recipe.policyList() == null) {
          throw new IllegalArgumentException(at + "policy_list: only a shoal member takes the generated list, and "
              + "recipe.policy_list must say how many names it has");
        }
        if (PolicyAction.forList(policyList) == null) {
          throw new IllegalArgumentException(at + "policy_list: the list's action, one of nxdomain, nodata, refuse, "
              + "drop; is " + policyList);
        }
        if (deltas.hasPath("policy.domain_lists")) {
          throw new IllegalArgumentException(at + "policy_list: the member's config sets policy.domain_lists too; "
              + "give one or the other");
        }
      }
      Transport transport = m.hasPath("transport") ? Transport.named(m.getString("transport")) : Transport.UDP;
      if (transport != Transport.UDP && !kind.servesEveryTransport()) {
        throw new IllegalArgumentException(at + "transport: " + kind.configName() + " members are queried over udp "
            + "only; tcp, dot and doh are for shoal and unbound");
      }
      if (transport != Transport.UDP && (nodes != 1 || cluster)) {
        throw new IllegalArgumentException(at + "transport: a member of several nodes or a cluster is queried over "
            + "udp only");
      }
      String group = m.hasPath("group") ? m.getString("group") : null;
      if (group != null && kind != MemberKind.SHOAL) {
        throw new IllegalArgumentException(at + "group: only shoal members are compared in groups");
      }
      if (recipe.cpuQuota() != null && kind != MemberKind.SHOAL) {
        throw new IllegalArgumentException(at + "kind: recipe.cpu_quota bounds shoal processes; a " + kind.configName()
            + " member would run without it");
      }
      Pace pace = m.hasPath("pace") ? Pace.from(m.getConfig("pace"), at + "pace.", memberName, order) : null;
      Member member = new Member(memberName, kind, deltas, nodes, cluster, kill, policyList, transport, group, pace);
      checkDnssec(member, at, recipe);
      members.add(member);
    }
    if (members.isEmpty()) {
      throw new IllegalArgumentException("members: list at least one member");
    }
    String baseline = c.hasPath("baseline") ? c.getString("baseline") : members.get(0).name();
    if (!seen.contains(baseline)) {
      throw new IllegalArgumentException("baseline: no member named '" + baseline + "'");
    }
    String description = c.hasPath("description") ? c.getString("description") : name;
    Integer honestQps = null;
    if (d.hasPath("honest_qps")) {
      int qps = d.getInt("honest_qps");
      if (qps <= 0 || qps > AttackPlan.MAX_RATE) {
        throw new IllegalArgumentException("recipe.dnsperf.honest_qps: the rate the honest clients ask at in every "
            + "UDP phase (dnsperf -Q), from 1 to " + AttackPlan.MAX_RATE + "; is " + qps
            + " (leave it out for honest clients as fast as answers come)");
      }
      if (!c.hasPath("attacks")) {
        throw new IllegalArgumentException("recipe.dnsperf.honest_qps: paces the honest clients of the robustness "
            + "phases; this scenario has no attacks block (a member of a plain study is paced with pace { of, share })");
      }
      honestQps = qps;
    }
    Integer honestOutstanding = null;
    if (d.hasPath("honest_outstanding")) {
      int window = d.getInt("honest_outstanding");
      if (honestQps == null) {
        throw new IllegalArgumentException("recipe.dnsperf.honest_outstanding: the outstanding queries of the paced "
            + "honest clients; set honest_qps too, or leave it out");
      }
      if (window <= 0 || window > MAX_OUTSTANDING) {
        throw new IllegalArgumentException("recipe.dnsperf.honest_outstanding: dnsperf -q in the paced phases, from 1 "
            + "to " + MAX_OUTSTANDING + "; is " + window);
      }
      honestOutstanding = window;
    }
    AttackPlan attacks = null;
    if (c.hasPath("attacks")) {
      attacks = AttackPlan.from(c.getConfig("attacks"), honestQps, honestOutstanding);
      // each member runs every phase, compared with its own baseline: the first is the shoal under
      // test, the others shoal or unbound servers of one process beside it
      if (members.get(0).kind() != MemberKind.SHOAL) {
        throw new IllegalArgumentException("attacks: the first member of a robustness scenario is the shoal under "
            + "test; is " + members.get(0).kind().configName());
      }
      for (int i = 0; i < members.size(); i++) {
        Member m = members.get(i);
        String at = "members[" + i + "].";
        if (m.kind() != MemberKind.SHOAL && m.kind() != MemberKind.UNBOUND) {
          throw new IllegalArgumentException(at + "kind: a robustness scenario measures shoal and unbound members "
              + "only (the phases know how to give them the hostile zone); is " + m.kind().configName());
        }
        if (m.isNodeGroup() || m.kill() != null || m.pace() != null) {
          throw new IllegalArgumentException(at.substring(0, at.length() - 1) + ": a robustness member is one "
              + "server without a kill or pace block (recipe.dnsperf.honest_qps paces the honest clients)");
        }
        if (m.transport() != Transport.UDP) {
          throw new IllegalArgumentException(at + "transport: the robustness phases choose their own transports");
        }
      }
      if (rounds != 1) {
        throw new IllegalArgumentException("attacks: the phases run once; recipe.rounds must be 1");
      }
    }
    OutagePlan outage = null;
    if (c.hasPath("outage")) {
      outage = OutagePlan.from(c.getConfig("outage"), recipe.stubTtl(), recipe.load(), recipe.quick());
      // one knotd is stopped under one shoal at a time; a round is a whole timeline
      if (members.stream().anyMatch(m -> m.kind() != MemberKind.SHOAL || m.isNodeGroup() || m.kill() != null
          || m.pace() != null || m.transport() != Transport.UDP)) {
        throw new IllegalArgumentException("outage: every member of an outage scenario is a shoal of one node "
            + "without a kill or pace block, queried over udp");
      }
      if (rounds != 1) {
        throw new IllegalArgumentException("outage: the outage test runs once; recipe.rounds must be 1");
      }
    }
    if (recipe.signed() && (attacks != null || outage != null)) {
      throw new IllegalArgumentException("recipe.dnssec: a signed zone is for plain studies; the "
          + (attacks != null ? "robustness phases" : "outage test") + " do not check answers for AD");
    }
    if (attacks != null && outage != null) {
      throw new IllegalArgumentException("outage: a scenario runs either the robustness phases (attacks) or the "
          + "outage test, not both");
    }
    CacheMemoryPlan cacheMemory = null;
    if (c.hasPath("cache_memory")) {
      if (attacks != null || outage != null) {
        throw new IllegalArgumentException("cache_memory: a scenario runs one kind of test; this one also has "
            + (attacks != null ? "attacks" : "outage"));
      }
      cacheMemory = CacheMemoryPlan.from(c.getConfig("cache_memory"), recipe);
      checkCacheMemoryMembers(members, recipe, rounds);
    }
    String partOf = c.hasPath("part_of") ? c.getString("part_of") : null;
    if (partOf != null && !partOf.matches("[A-Za-z0-9][A-Za-z0-9_.-]*")) {
      throw new IllegalArgumentException("part_of: a study name (letters, digits, '.', '_', '-'), is '" + partOf + "'");
    }
    StudyPage page = new StudyPage(c.hasPath("question") ? c.getString("question") : description,
        c.hasPath("when_this_matters") ? c.getString("when_this_matters") : null, partOf);
    return new Scenario(name, description, baseline, recipe, List.copyOf(members), source, attacks, outage,
        cacheMemory, page);
  }

  /**
   * The members of a memory-per-answer test: shoal and unbound servers of one process each, over
   * UDP, whose resident set the study reads and whose cached answers it can count.
   */
  private static void checkCacheMemoryMembers(List<Member> members, Recipe recipe, int rounds) {
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      String at = "members[" + i + "]";
      if (m.kind() != MemberKind.SHOAL && m.kind() != MemberKind.UNBOUND) {
        throw new IllegalArgumentException(at + ".kind: a cache_memory scenario measures shoal and unbound members "
            + "only (the study counts their cached answers); is " + m.kind().configName());
      }
      if (m.isNodeGroup() || m.kill() != null || m.pace() != null || m.transport() != Transport.UDP) {
        throw new IllegalArgumentException(at + ": a cache_memory member is one process without a kill or pace "
            + "block, queried over udp (its resident set is one process's)");
      }
      if (m.kind() == MemberKind.SHOAL && m.config().hasPath("caches.answers.max_entries")) {
        throw new IllegalArgumentException(at + ".config.caches.answers.max_entries: the test sizes the cache from "
            + "recipe.max_entries, which every size must fit; set it there");
      }
    }
    if (rounds != 1) {
      throw new IllegalArgumentException("cache_memory: each size runs once per member; recipe.rounds must be 1");
    }
    if (recipe.signed()) {
      throw new IllegalArgumentException("recipe.dnssec: the cache_memory test measures unsigned answers");
    }
    if (recipe.cpuQuota() != null) {
      // a quota wraps the JVM in another process, and the test reads the resident set of the JVM's own
      throw new IllegalArgumentException("recipe.cpu_quota: the cache_memory test runs every member without one");
    }
  }

  /**
   * A member validates only over a signed zone, from the anchor the run takes from knotd; and in a
   * signed recipe every member is one server, whose sample answer the run checks for AD.
   */
  private static void checkDnssec(Member m, String at, Recipe recipe) {
    if (m.kind() == MemberKind.SHOAL && m.config().hasPath(Member.SHOAL_VALIDATION)) {
      String mode = m.config().getString(Member.SHOAL_VALIDATION);
      if (!Member.SHOAL_MODES.contains(mode)) {
        throw new IllegalArgumentException(at + "config." + Member.SHOAL_VALIDATION + ": one of "
            + String.join(", ", Member.SHOAL_MODES) + "; is " + mode);
      }
    }
    if (m.validates() && !recipe.signed()) {
      throw new IllegalArgumentException(at + "config: the member validates DNSSEC, but the zone is unsigned; "
          + "add recipe.dnssec so knotd signs it (validation over an unsigned zone measures nothing)");
    }
    if (recipe.signed()) {
      if (m.kind() == MemberKind.SHOAL && m.config().hasPath(Member.SHOAL_ANCHORS)) {
        throw new IllegalArgumentException(at + "config." + Member.SHOAL_ANCHORS + ": the run gives validating "
            + "members the anchor of the zone knotd signed; leave it out");
      }
      if (m.kind() != MemberKind.SHOAL && m.kind() != MemberKind.UNBOUND && m.kind() != MemberKind.KNOTD) {
        throw new IllegalArgumentException(at + "kind: with recipe.dnssec the members are shoal, unbound or knotd, "
            + "whose validation the run knows how to set up; is " + m.kind().configName());
      }
      if (m.isNodeGroup()) {
        throw new IllegalArgumentException(at + "nodes: with recipe.dnssec every member is one server (the run "
            + "checks its sample answer for AD)");
      }
    }
  }

  /**
   * This scenario with the trust anchor file the run writes at {@code file} (the DS records of the
   * zone knotd signed) given to every validating member; the scenario itself for an unsigned zone.
   */
  public Scenario withTrustAnchorAt(Path file) {
    if (!recipe.signed()) {
      return this;
    }
    return new Scenario(name, description, baseline, recipe, members.stream().map(m -> m.withTrustAnchorAt(file))
        .toList(), source, attacks, outage, cacheMemory, page);
  }

  private static PolicyList policyList(Config p) {
    allowOnly(p, "recipe.policy_list.", POLICY_LIST);
    int names = positive(p, "names");
    int quickNames = p.hasPath("quick_names") ? positive(p, "quick_names") : names;
    return new PolicyList(names, quickNames, p.getLong("seed"));
  }

  /** recipe.cpu_quota: CPUs per shoal process, above 0 and at most 64; null when not set. */
  private static Double cpuQuota(Config r) {
    if (!r.hasPath("cpu_quota")) {
      return null;
    }
    double q = r.getDouble("cpu_quota");
    if (!(q >= 0.01) || q > 64) {
      throw new IllegalArgumentException("recipe.cpu_quota: CPUs per shoal process, from 0.01 to 64, is " + q);
    }
    return q;
  }

  /**
   * recipe.cpu_period: the CFS period of each quota, from 1 ms to 1 s with at least 1 ms of CPU in
   * it; the kernel's 100 ms when not set.
   */
  private static Duration cpuPeriod(Config r) {
    if (!r.hasPath("cpu_period")) {
      return io.shoal.study.host.CpuQuota.DEFAULT_PERIOD;
    }
    if (!r.hasPath("cpu_quota")) {
      throw new IllegalArgumentException("recipe.cpu_period: the period of recipe.cpu_quota, which is not set");
    }
    Duration period = r.getDuration("cpu_period");
    try {
      io.shoal.study.host.CpuQuota.checkedPeriod(r.getDouble("cpu_quota"), period);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("recipe.cpu_period: " + e.getMessage(), e);
    }
    return period;
  }

  /**
   * recipe.cpu_quota_from: {@code start} (the default: the JVM starts under its quota) or
   * {@code measured} (the quota applies from the measured run on, after the warm-up).
   */
  private static boolean cpuQuotaAfterWarmup(Config r) {
    if (!r.hasPath("cpu_quota_from")) {
      return false;
    }
    if (!r.hasPath("cpu_quota")) {
      throw new IllegalArgumentException("recipe.cpu_quota_from: says when recipe.cpu_quota applies, which is not set");
    }
    return switch (r.getString("cpu_quota_from")) {
      case "start" -> false;
      case "measured" -> true;
      default -> throw new IllegalArgumentException("recipe.cpu_quota_from: start (the JVM starts under its quota) or"
          + " measured (after the warm-up), is '" + r.getString("cpu_quota_from") + "'");
    };
  }

  private static KillPlan kill(Config k, String at, int nodes, boolean cluster, LoadSettings load,
      Duration quickDuration) {
    allowOnly(k, at, KILL);
    if (!cluster || nodes < 3) {
      // With two nodes, keep-majority has no majority to keep once one is gone.
      throw new IllegalArgumentException(at.substring(0, at.length() - 1)
          + ": the kill test needs cluster = on and at least 3 nodes, so a majority survives the kill of one");
    }
    if (k.hasPath("node") && k.hasPath("nodes")) {
      throw new IllegalArgumentException(at + "nodes: give node (one) or nodes (a list), not both");
    }
    List<Integer> victims = k.hasPath("nodes") ? k.getIntList("nodes") : List.of(k.hasPath("node") ? k.getInt("node")
        : nodes - 1);
    String key = at + (k.hasPath("nodes") ? "nodes" : "node");
    for (int node : victims) {
      if (node < 0 || node >= nodes) {
        throw new IllegalArgumentException(key + ": from 0 to " + (nodes - 1) + ", is " + node);
      }
    }
    if (victims.isEmpty() || new HashSet<>(victims).size() != victims.size() || victims.size() >= nodes) {
      throw new IllegalArgumentException(key + ": distinct nodes, at least one, and at least one node left to "
          + "measure; is " + victims);
    }
    Duration after = k.getDuration("after");
    Duration quickAfter = k.hasPath("quick_after") ? k.getDuration("quick_after") : after;
    Duration timeout = k.hasPath("query_timeout") ? k.getDuration("query_timeout") : Duration.ofSeconds(2);
    if (after.compareTo(Duration.ofSeconds(2)) < 0 || after.compareTo(load.duration()) >= 0) {
      throw new IllegalArgumentException(at + "after: at least 2s (one second to measure before the kill, "
          + "after dnsperf's first) and less than recipe.dnsperf.duration (" + load.duration().toSeconds() + "s)");
    }
    if (quickAfter.compareTo(Duration.ofSeconds(2)) < 0 || quickAfter.compareTo(quickDuration) >= 0) {
      throw new IllegalArgumentException(at + "quick_after: at least 2s and less than recipe.quick.duration ("
          + quickDuration.toSeconds() + "s)");
    }
    if (timeout.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException(at + "query_timeout: at least 1s (dnsperf -t counts seconds)");
    }
    return new KillPlan(victims, after, quickAfter, timeout);
  }

  private static int positive(Config c, String key) {
    int v = c.getInt(key);
    if (v <= 0) {
      throw new IllegalArgumentException(key + ": must be positive, is " + v);
    }
    return v;
  }

  static void allowOnly(Config c, String prefix, Set<String> allowed) {
    Set<String> unknown = new TreeSet<>(c.root().keySet());
    unknown.removeAll(allowed);
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(prefix + unknown.iterator().next() + ": unknown key; allowed here: "
          + String.join(", ", new TreeSet<>(allowed)));
    }
  }
}

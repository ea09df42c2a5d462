package io.shoal.study.scenario;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads and checks one scenario from its HOCON: the recipe and members (through {@link RecipeReader}
 * and {@link MemberReader}), the baseline, and the robustness, outage or memory-per-answer test with
 * what each asks of the members; plus the key checks the other blocks' readers share.
 */
final class ScenarioReader {

  private static final Set<String> TOP = Set.of(
      "description", "baseline", "recipe", "members", "attacks", "outage", "cache_memory", "question",
      "when_this_matters", "part_of", "recursion", "repeats_baseline");
  /** dnsperf's most outstanding queries (-q). */
  static final int MAX_OUTSTANDING = 65_535;

  private ScenarioReader() {
  }

  /** The scenario {@code name} read from {@code c}; {@code source} is the file it came from, or null. */
  static Scenario read(String name, Config c, Path source) {
    allowOnly(c, "", TOP);
    Recipe recipe = RecipeReader.read(c.getConfig("recipe"));
    Config d = c.getConfig("recipe").getConfig("dnsperf");
    int rounds = recipe.rounds();
    List<Member> members = MemberReader.read(c.getConfigList("members"), recipe, c.hasPath("recursion"));
    String baseline = c.hasPath("baseline") ? c.getString("baseline") : members.get(0).name();
    if (members.stream().noneMatch(m -> m.name().equals(baseline))) {
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
    RecursionPlan recursion = null;
    if (c.hasPath("recursion")) {
      if (attacks != null || outage != null || cacheMemory != null) {
        throw new IllegalArgumentException("recursion: a scenario runs one kind of test; this one also has "
            + (attacks != null ? "attacks" : outage != null ? "outage" : "cache_memory"));
      }
      recursion = RecursionPlan.from(c.getConfig("recursion"));
      checkRecursionMembers(members, recursion);
    }
    if (recipe.sideBySide()) {
      checkSideBySide(members, attacks != null || outage != null || cacheMemory != null || recursion != null);
    }
    String partOf = c.hasPath("part_of") ? c.getString("part_of") : null;
    if (partOf != null && !partOf.matches("[A-Za-z0-9][A-Za-z0-9_.-]*")) {
      throw new IllegalArgumentException("part_of: a study name (letters, digits, '.', '_', '-'), is '" + partOf + "'");
    }
    StudyPage page = new StudyPage(c.hasPath("question") ? c.getString("question") : description,
        c.hasPath("when_this_matters") ? c.getString("when_this_matters") : null, partOf,
        c.hasPath("repeats_baseline") ? repeats(c.getStringList("repeats_baseline"), members, baseline) : List.of());
    return new Scenario(name, description, baseline, recipe, members, source, attacks, outage, cacheMemory, page, recursion);
  }

  /**
   * repeats_baseline: members that are the baseline again under another name (the same kind,
   * configuration, nodes, transport and list, no pace or kill), for an A/A check.
   */
  private static List<String> repeats(List<String> names, List<Member> members, String baseline) {
    Member base = members.stream().filter(m -> m.name().equals(baseline)).findFirst().orElseThrow();
    for (String name : names) {
      Member m = members.stream().filter(x -> x.name().equals(name)).findFirst().orElseThrow(
          () -> new IllegalArgumentException("repeats_baseline: no member named '" + name + "'"));
      if (name.equals(baseline)) {
        throw new IllegalArgumentException("repeats_baseline: '" + name + "' is the baseline itself");
      }
      Member same = new Member(baseline, m.kind(), m.config(), m.nodes(), m.cluster(), m.kill(), m.policyList(),
          m.transport(), m.group(), m.pace(), m.jvmOptions());
      if (!same.equals(base)) {
        throw new IllegalArgumentException("repeats_baseline: '" + name + "' differs from the baseline " + baseline
            + " (kind, config, nodes, transport, list, group, pace, kill or JVM options): an A/A member is the "
            + "baseline again");
      }
    }
    return names;
  }

  /**
   * recipe.turns = slices keeps every member running while the others are measured: a plain study
   * of one-server members, none paced by another's QPS (measured in the same round, after it) and
   * none killed.
   */
  private static void checkSideBySide(List<Member> members, boolean otherKindOfTest) {
    if (otherKindOfTest) {
      throw new IllegalArgumentException("recipe.turns: slices is for plain studies; the robustness, outage, "
          + "cache_memory and recursion tests run their members one at a time");
    }
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      if (m.isNodeGroup() || m.kill() != null || m.pace() != null) {
        throw new IllegalArgumentException("members[" + i + "]: with recipe.turns = slices every member is one server "
            + "without a kill or pace block (" + m.name() + " is not)");
      }
    }
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
   * The members of a recursion test: shoal, unbound and kresd servers of one process each, over
   * UDP; the cluster part runs the first shoal member's configuration on several nodes.
   */
  private static void checkRecursionMembers(List<Member> members, RecursionPlan plan) {
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      String at = "members[" + i + "]";
      if (m.kind() != MemberKind.SHOAL && m.kind() != MemberKind.UNBOUND && m.kind() != MemberKind.KRESD) {
        throw new IllegalArgumentException(at + ".kind: a recursion scenario measures shoal, unbound and kresd "
            + "members (resolvers that start from root hints); is " + m.kind().configName());
      }
      if (m.isNodeGroup() || m.kill() != null || m.pace() != null || m.transport() != Transport.UDP) {
        throw new IllegalArgumentException(at + ": a recursion member is one process without a kill or pace "
            + "block, queried over udp (recursion.cluster_nodes runs the cluster part)");
      }
    }
    if (plan.clusterNodes() > 0 && members.stream().noneMatch(m -> m.kind() == MemberKind.SHOAL)) {
      throw new IllegalArgumentException("recursion.cluster_nodes: the cluster part runs the first shoal member's "
          + "configuration; list a shoal member");
    }
  }

  /** The integer at {@code key}, which must be above 0. */
  static int positive(Config c, String key) {
    int v = c.getInt(key);
    if (v <= 0) {
      throw new IllegalArgumentException(key + ": must be positive, is " + v);
    }
    return v;
  }

  /** Fails, naming the first unknown key after {@code prefix}, if {@code c} has a key not in {@code allowed}. */
  static void allowOnly(Config c, String prefix, Set<String> allowed) {
    Set<String> unknown = new TreeSet<>(c.root().keySet());
    unknown.removeAll(allowed);
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(prefix + unknown.iterator().next() + ": unknown key; allowed here: "
          + String.join(", ", new TreeSet<>(allowed)));
    }
  }
}

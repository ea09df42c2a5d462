package io.shoal.study.scenario;

import static io.shoal.study.scenario.ScenarioReader.allowOnly;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.policy.PolicyAction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads and checks a scenario's {@code members} list: each member's name, kind, configuration,
 * nodes, kill test, generated domain list, transport, group, pace, JVM options and DNSSEC settings,
 * against the recipe they run under.
 */
final class MemberReader {

  private static final Set<String> MEMBER = Set.of("name", "kind", "config", "nodes", "cluster", "kill",
      "policy_list", "transport", "group", "pace", "jvm_options");
  private static final Set<String> KILL = Set.of("node", "nodes", "after", "quick_after", "query_timeout");
  /** More shoal processes than this on one host measure the host, not shoal. */
  static final int MAX_NODES = 9;

  private MemberReader() {
  }

  /**
   * The members in {@code list}, in its order, at least one; the error names the member and key at
   * fault. {@code signedTree}: the scenario's recursion tree is signed, so a member may validate over
   * an unsigned recipe zone.
   */
  static List<Member> read(List<? extends Config> list, Recipe recipe, boolean signedTree) {
    LoadSettings load = recipe.load();
    int rounds = recipe.rounds();
    List<Member> members = new ArrayList<>();
    Set<String> seen = new HashSet<>();
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
          recipe.quick().duration()) : null;
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
      List<String> jvmOptions = m.hasPath("jvm_options") ? m.getStringList("jvm_options") : List.of();
      if (!jvmOptions.isEmpty() && kind != MemberKind.SHOAL) {
        throw new IllegalArgumentException(at + "jvm_options: only shoal members run on a JVM");
      }
      for (String option : jvmOptions) {
        if (!option.startsWith("-")) {
          throw new IllegalArgumentException(at + "jvm_options: each is one JVM option starting with '-', is '"
              + option + "'");
        }
      }
      Member member = new Member(memberName, kind, deltas, nodes, cluster, kill, policyList, transport, group, pace,
          jvmOptions);
      checkDnssec(member, at, recipe, signedTree);
      members.add(member);
    }
    if (members.isEmpty()) {
      throw new IllegalArgumentException("members: list at least one member");
    }
    return List.copyOf(members);
  }

  /**
   * A member validates only over a signed zone, from the anchor the run takes from knotd; and in a
   * signed recipe every member is one server, whose sample answer the run checks for AD. A recursion
   * scenario ({@code signedTree}) validates over its own signed tree.
   */
  private static void checkDnssec(Member m, String at, Recipe recipe, boolean signedTree) {
    if (m.kind() == MemberKind.SHOAL && m.config().hasPath(Member.SHOAL_VALIDATION)) {
      String mode = m.config().getString(Member.SHOAL_VALIDATION);
      if (!Member.SHOAL_MODES.contains(mode)) {
        throw new IllegalArgumentException(at + "config." + Member.SHOAL_VALIDATION + ": one of "
            + String.join(", ", Member.SHOAL_MODES) + "; is " + mode);
      }
    }
    if (m.validates() && !recipe.signed() && !signedTree) {
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
}

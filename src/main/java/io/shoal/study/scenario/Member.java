package io.shoal.study.scenario;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueFactory;
import java.nio.file.Path;
import java.util.List;

/**
 * One server a scenario measures. For shoal, {@code config} holds keys under {@code shoal}
 * merged over the recipe's configuration; for a peer, its own settings (see {@link MemberKind}).
 *
 * @param nodes how many shoal processes the member runs side by side on loopback (1 for peers)
 * @param cluster true if those processes form one Akka cluster; false for independent nodes
 * @param kill the node-loss test to run instead of the plain measured run, or null
 * @param policyList the action of the run's generated domain list ({@link PolicyList}) for a shoal
 *     member that loads it, or null
 * @param transport how dnsperf sends it queries: UDP unless the scenario says otherwise
 * @param group the members this one is compared with in cluster.csv's summary (a one-node member, the
 *     independent nodes and the cluster of one workload), or null: the scenario's members form one group
 * @param pace how the member's dnsperf processes are held below an earlier member's QPS, or null: as
 *     fast as its answers come
 * @param jvmOptions a shoal member's own JVM options, after the recipe's (so they win where both set
 *     one): a JVM option measured against the shipped ones in one run; empty for most
 */
public record Member(String name, MemberKind kind, Config config, int nodes, boolean cluster, KillPlan kill,
    String policyList, Transport transport, String group, Pace pace, List<String> jvmOptions) {

  public Member {
    jvmOptions = List.copyOf(jvmOptions);
  }

  /** A member with the recipe's JVM options only. */
  public Member(String name, MemberKind kind, Config config, int nodes, boolean cluster, KillPlan kill,
      String policyList, Transport transport, String group, Pace pace) {
    this(name, kind, config, nodes, cluster, kill, policyList, transport, group, pace, List.of());
  }

  /** A shoal member's validation mode, under its config block. */
  static final String SHOAL_VALIDATION = "dnssec.validation";
  /** A shoal member's trust anchor files, under its config block. */
  static final String SHOAL_ANCHORS = "dnssec.trust_anchors";
  /** shoal's validation modes; off is what a study runs without saying (ShoalUnderTest). */
  static final java.util.List<String> SHOAL_MODES = List.of("on", "permissive", "off");
  /** An unbound member's switch for its validator module. */
  public static final String UNBOUND_VALIDATOR = "validator";
  /** Where the run put the zone's trust anchor, for an unbound member that validates; set by the run only. */
  public static final String UNBOUND_ANCHOR = "trust_anchor_file";
  /**
   * An unbound member's switch for asking knotd as the zone's authoritative server (a stub-zone)
   * rather than as a forwarder (a forward-zone, the default): unbound's {@code ratelimit} leaves
   * configured forwarders out, so a member whose zone budget is measured asks knotd as a stub.
   */
  public static final String UNBOUND_STUB_ZONE = "stub_zone";
  /** A second zone an unbound member forwards elsewhere (the robustness hostile zone); set by the run only. */
  public static final String UNBOUND_SIDE_ZONE = "side_forward_zone";
  /** Where {@link #UNBOUND_SIDE_ZONE} goes, as unbound writes it (127.0.0.1@PORT); set by the run only. */
  public static final String UNBOUND_SIDE_ADDR = "side_forward_addr";

  /** Where the run put the recursion tree's root hints, for an unbound or kresd member; set by the run only. */
  public static final String ROOT_HINTS = "root_hints";

  /** A member outside any comparison group, not paced. */
  public Member(String name, MemberKind kind, Config config, int nodes, boolean cluster, KillPlan kill,
      String policyList, Transport transport) {
    this(name, kind, config, nodes, cluster, kill, policyList, transport, null, null);
  }

  /** A member of one process, not clustered, queried over UDP: every member before cluster studies existed. */
  public Member(String name, MemberKind kind, Config config) {
    this(name, kind, config, 1, false, null, null, Transport.UDP);
  }

  /**
   * True if the member is measured as a group of nodes (one dnsperf per node, results summed over
   * the nodes). A one-node cluster is a group too: it pays the cluster's costs.
   */
  public boolean isNodeGroup() {
    return nodes > 1 || cluster;
  }

  /**
   * True if the member validates DNSSEC: a shoal with {@code dnssec.validation} on or permissive,
   * an unbound with {@code validator = true}. (shoal members of a study run with validation off
   * unless they say otherwise.)
   */
  public boolean validates() {
    return switch (kind) {
      case SHOAL -> config.hasPath(SHOAL_VALIDATION) && !config.getString(SHOAL_VALIDATION).equals("off");
      case UNBOUND -> config.hasPath(UNBOUND_VALIDATOR) && config.getBoolean(UNBOUND_VALIDATOR);
      default -> false;
    };
  }

  /** This member, if it validates, with {@code file} as its trust anchor; the member itself otherwise. */
  public Member withTrustAnchorAt(Path file) {
    if (!validates()) {
      return this;
    }
    String path = file.toAbsolutePath().toString();
    Config anchored = kind == MemberKind.SHOAL
        ? config.withValue(SHOAL_ANCHORS, ConfigValueFactory.fromIterable(List.of(path)))
        : config.withValue(UNBOUND_ANCHOR, ConfigValueFactory.fromAnyRef(path));
    return new Member(name, kind, anchored, nodes, cluster, kill, policyList, transport, group, pace, jvmOptions);
  }

  /**
   * This member resolving from the root of the recursion study's tree: {@code hints} as its root
   * hints and {@code anchor} (the root's DS) as its trust anchor. shoal gets them as
   * {@code upstreams.default.root_hints} and {@code dnssec.trust_anchors}; unbound and kresd as
   * {@link #ROOT_HINTS} and {@link #UNBOUND_ANCHOR}.
   */
  public Member withRecursionTree(Path hints, Path anchor) {
    String h = hints.toAbsolutePath().toString();
    String a = anchor.toAbsolutePath().toString();
    Config c = kind == MemberKind.SHOAL
        ? config.withValue("upstreams.default.root_hints", ConfigValueFactory.fromAnyRef(h))
            .withValue(SHOAL_ANCHORS, ConfigValueFactory.fromIterable(List.of(a)))
        : config.withValue(ROOT_HINTS, ConfigValueFactory.fromAnyRef(h))
            .withValue(UNBOUND_ANCHOR, ConfigValueFactory.fromAnyRef(a));
    return new Member(name, kind, c, nodes, cluster, kill, policyList, transport, group, pace, jvmOptions);
  }

  /**
   * This member with the run's generated list, written at {@code file}, as its
   * {@code policy.domain_lists}; the member itself when it does not take the list.
   */
  public Member withPolicyListAt(Path file) {
    if (policyList == null) {
      return this;
    }
    Config listed = config.withValue("policy.domain_lists",
        ConfigValueFactory.fromIterable(List.of(file.toAbsolutePath() + " " + policyList)));
    return new Member(name, kind, listed, nodes, cluster, kill, policyList, transport, group, pace, jvmOptions);
  }
}

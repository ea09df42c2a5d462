package io.shoal.study.scenario;

import com.typesafe.config.Config;
import java.util.List;
import java.util.Set;

/**
 * A member's {@code pace} block: its dnsperf processes send at most {@code share} of what member
 * {@code of} achieved earlier in the same run. A closed-loop dnsperf drives a quota-bound node to
 * saturation, where latency is mostly queueing; paced below capacity, the latency measured is what a
 * busy but not overloaded cluster shows.
 *
 * @param of the member whose achieved QPS sets the pace: listed earlier, so measured first
 * @param share the part of that QPS this member is offered, in (0, 1]
 */
public record Pace(String of, double share) {

  private static final Set<String> KEYS = Set.of("of", "share");

  /**
   * The -Q of each of a member's dnsperf processes: {@code share} of the reference's QPS, spread
   * evenly over the member's {@code nodes} (one dnsperf per node), rounded, and at least 1, since
   * dnsperf takes a whole positive rate.
   */
  public int maxQpsPerNode(double referenceQps, int nodes) {
    return (int) Math.max(1, Math.round(share * referenceQps / nodes));
  }

  /**
   * The pace block {@code p} at {@code at} (e.g. "members[5].pace.") of the member named
   * {@code self}; {@code order} names every member of the scenario as listed, the order they are
   * measured in.
   */
  static Pace from(Config p, String at, String self, List<String> order) {
    ScenarioReader.allowOnly(p, at, KEYS);
    String of = p.getString("of");
    double share = p.getDouble("share");
    if (of.equals(self)) {
      throw new IllegalArgumentException(at + "of: a member cannot be paced by its own QPS; name a member listed "
          + "before it");
    }
    int reference = order.indexOf(of);
    if (reference < 0) {
      throw new IllegalArgumentException(at + "of: no member named '" + of + "'");
    }
    if (reference > order.indexOf(self)) {
      throw new IllegalArgumentException(at + "of: " + of + " is listed after " + self + "; members are measured "
          + "in order, so the reference must come first");
    }
    if (!(share > 0 && share <= 1)) {
      throw new IllegalArgumentException(at + "share: the part of " + of + "'s QPS to offer, above 0 and at most 1; "
          + "is " + share);
    }
    return new Pace(of, share);
  }
}

package io.shoal.config;

import java.time.Duration;

/**
 * Warm join ({@code shoal.cluster.warm_join}): when the owner ring changes, the nodes that hold
 * answers a member now owns send them to it, at a bounded rate, so it does not fetch them again.
 *
 * @param enabled whether this node sends the answers others now own and takes in those it now owns
 * @param maxAnswersPerSecond how many answers this node sends per second, over all its transfers
 * @param batch answers per message (and per acknowledgement)
 * @param minTtlLeft answers with less TTL left than this are not sent (they would expire on the way)
 * @param askPreviousOwner for how long after this node enters an owner ring a miss for a name it
 *     owns is first asked of the name's previous owner, from its cache only, before the upstreams:
 *     the answers sent to this node are not all in yet; zero: never
 */
public record WarmJoinSettings(
    boolean enabled, long maxAnswersPerSecond, int batch, Duration minTtlLeft, Duration askPreviousOwner) {

  /** Warm join off: a node neither sends nor takes answers. */
  public static final WarmJoinSettings OFF = new WarmJoinSettings(false, 1, 1, Duration.ZERO, Duration.ZERO);

  /** How long a joining node asks previous owners: {@link #askPreviousOwner}, zero with warm join off. */
  public Duration previousOwnerWindow() {
    return enabled ? askPreviousOwner : Duration.ZERO;
  }

  static WarmJoinSettings from(Section w) {
    w.allowOnly("enabled", "max_answers_per_second", "batch", "min_ttl_left", "ask_previous_owner");
    long rate = w.integer("max_answers_per_second", 1, 1_000_000);
    int batch = (int) w.integer("batch", 1, 10_000);
    if (batch > rate) {
      throw new InvalidConfigException(w.key("batch"), "must not exceed max_answers_per_second (" + rate
          + "), got " + batch + ": one message would already send more than a second's answers");
    }
    return new WarmJoinSettings(w.bool("enabled"), rate, batch,
        w.duration("min_ttl_left", Duration.ZERO, Duration.ofHours(1)),
        w.duration("ask_previous_owner", Duration.ZERO, Duration.ofHours(1)));
  }
}

package io.shoal.dnssec;

import io.shoal.metrics.DnssecMetrics;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;

/**
 * A node's kept DNSSEC denials (RFC 8198), one {@link DenialCache} per upstream group (two groups
 * may see two views of one zone, split-horizon), kept across reloads that change neither the
 * group nor the DNSSEC settings, and shared with the other nodes of a cluster: a proof this node
 * validated is told to {@link Peers}, and one another node validated is kept here as if
 * validated here (the nodes trust each other's answers already: an owner's AD is served as is).
 */
public final class DenialProofs {
  /** Where a newly kept proof goes: the other nodes. */
  public interface Peers {
    /**
     * @param upstream the upstream group that gave it
     * @param authority the authority section of the secure denial (SOA, NSEC/NSEC3, RRSIGs) in wire form
     * @param learnedAtMillis when its TTLs began to count
     */
    void tell(String upstream, byte[] authority, long learnedAtMillis);
  }

  private static final Peers NOBODY = (u, a, t) -> {};

  private final ConcurrentHashMap<String, DenialCache> byGroup = new ConcurrentHashMap<>();
  private final DnssecMetrics metrics;
  private final LongSupplier clock;
  private volatile Peers peers = NOBODY;

  /** @param clock epoch milliseconds, shoal's clock */
  public DenialProofs(DnssecMetrics metrics, LongSupplier clock) {
    this.metrics = metrics;
    this.clock = clock;
  }

  /** Tells newly kept proofs to {@code peers} from now on (null: to nobody). */
  public void tellTo(Peers peers) {
    this.peers = peers == null ? NOBODY : peers;
  }

  /** The store of {@code upstream}'s denials. */
  DenialCache of(String upstream) {
    return byGroup.computeIfAbsent(upstream, u -> new DenialCache());
  }

  /**
   * Forgets what was kept for the upstream groups not in {@code keep}: a reload replaced their
   * servers or the DNSSEC settings (other anchors may judge the old proofs otherwise).
   */
  public void retainOnly(Set<String> keep) {
    byGroup.keySet().removeIf(g -> {
      if (!keep.contains(g)) {
        metrics.denials(g, 0, 0);
        return true;
      }
      return false;
    });
  }

  /** Keeps the ranges of a secure denial {@code upstream} gave at {@code now}; new ones are told to the peers. */
  void learned(String upstream, Message validated, long now) {
    List<Record> authority = validated.getSection(Section.AUTHORITY);
    DenialCache cache = of(upstream);
    if (cache.learn(authority, now)) {
      metrics.denials(upstream, cache.ranges(), cache.bytes());
      Message share = new Message(0);
      authority.forEach(r -> share.addRecord(r, Section.AUTHORITY));
      peers.tell(upstream, share.toWire(), now);
    }
  }

  /**
   * Keeps a proof another node validated (see {@link Peers#tell}); not told on again. A proof
   * that does not parse is ignored: it proves nothing.
   */
  public void fromPeer(String upstream, byte[] authority, long learnedAtMillis) {
    try {
      List<Record> records = new Message(authority).getSection(Section.AUTHORITY);
      // A peer's clock ahead of ours must not lengthen the proof's life here.
      long at = Math.min(learnedAtMillis, clock.getAsLong());
      DenialCache cache = of(upstream);
      if (cache.learn(records, at)) {
        metrics.denials(upstream, cache.ranges(), cache.bytes());
      }
    } catch (IOException e) {
      // Not a proof: nothing is kept.
    }
  }

  /** Whether {@code upstream}'s store keeps any range: when not, a miss need not be looked at further. */
  boolean holdsAny(String upstream) {
    DenialCache cache = byGroup.get(upstream);
    return cache != null && cache.holdsAny();
  }

  /** The denial of {@code qname} that {@code upstream}'s kept proofs make at {@code now}, or null. */
  DenialCache.Synthesized synthesize(String upstream, Name qname, int qtype, boolean dnssecOk, long now) {
    DenialCache cache = byGroup.get(upstream);
    return cache == null ? null : cache.synthesize(qname, qtype, dnssecOk, now);
  }
}

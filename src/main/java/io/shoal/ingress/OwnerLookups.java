package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.upstream.DatagramSender;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.Rcode;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.slf4j.LoggerFactory;

/**
 * A worker's side of owner lookups in cluster mode: which node to ask for a miss first, and what
 * that node's reply is worth, counted as shoal_cluster_remote_lookups_total{outcome}.
 */
final class OwnerLookups {
  private static final FailureLog refusals = new FailureLog(LoggerFactory.getLogger(OwnerLookups.class), 60);

  private final OwnerDirectory owners;
  private final Duration timeout;
  private final ServerMetrics metrics;
  private final FailureLog failures;

  /** @param failures where a malformed reply is logged */
  OwnerLookups(OwnerDirectory owners, Duration timeout, ServerMetrics metrics, FailureLog failures) {
    this.owners = owners;
    this.timeout = timeout;
    this.metrics = metrics;
    this.failures = failures;
  }

  /**
   * The node that owns {@code query}'s key, to ask first; null when this node asks upstream
   * itself: it owns the key, cluster mode is off, or another node asked as to the key's owner.
   */
  OwnerDirectory.Owner ownerOf(DnsQuery query) {
    return query.fromPeer() ? null : owners.ownerOf(query.key());
  }

  /**
   * How long a lookup from another node waits for the upstreams before it gets the stale answer:
   * the client timeout, but at most half the owner timeout, which the nodes share, so the stale
   * answer reaches the asking node before it gives up on this one and goes upstream itself.
   */
  Duration peerStaleWait(Duration clientTimeout) {
    Duration half = timeout.dividedBy(2);
    return clientTimeout.compareTo(half) < 0 ? clientTimeout : half;
  }

  /**
   * The node that owned {@code query}'s key before this node entered the ring, to ask for the
   * answer in its cache before the upstreams; null when there is none to ask (see {@link
   * OwnerDirectory#previousOwnerOf}).
   */
  OwnerDirectory.Owner previousOwnerOf(DnsQuery query) {
    return owners.previousOwnerOf(query.key());
  }

  /** Asks {@code previous} for the answer in its cache; completes with its reply, or exceptionally when none came in time. */
  CompletableFuture<byte[]> askCache(OwnerDirectory.Owner previous, DnsQuery query) {
    return owners.askCache(previous, query, timeout);
  }

  /**
   * The answer a previous owner held, from its {@code reply} (null: none in time); null when it
   * held none (it refuses a lookup in its cache that misses) or its reply is of no use. Counted as
   * shoal_cluster_previous_owner_lookups_total{outcome}: held, not_held, timeout.
   */
  ScannedAnswer heldByPrevious(byte[] reply) {
    ScannedAnswer scan = null;
    if (reply != null) {
      try {
        scan = ScannedAnswer.fromUpstream(reply);
      } catch (WireException e) {
        failures.warn("malformed answer from a previous owner node", e);
      }
    }
    if (scan == null) {
      metrics.previousOwnerLookup("timeout");
      return null;
    }
    if (ScannedAnswer.saysStale(reply) || (scan.rcode() != Rcode.NOERROR && scan.rcode() != Rcode.NXDOMAIN)) {
      metrics.previousOwnerLookup("not_held");
      return null;
    }
    metrics.previousOwnerLookup("held");
    return scan;
  }

  /** Asks {@code owner}; completes with its reply, or null when none came in time. */
  CompletableFuture<byte[]> ask(OwnerDirectory.Owner owner, DnsQuery query) {
    return owners.ask(owner, query, timeout);
  }

  /** As {@link #ask(OwnerDirectory.Owner, DnsQuery)}, sent from {@code via} (a listening UDP socket; null: none) where it can be. */
  CompletableFuture<byte[]> ask(OwnerDirectory.Owner owner, DnsQuery query, DatagramSender via) {
    return owners.ask(owner, query, timeout, via);
  }

  /**
   * The owner's {@code reply} for {@code key} as this node can use it; null, counted, when it
   * cannot: no reply in time or a malformed one (timeout), or REFUSED (refused, and logged: the
   * owner's access_control shuts the other nodes out).
   */
  ScannedAnswer usable(CacheKey key, byte[] reply) {
    ScannedAnswer scan = null;
    if (reply != null) {
      try {
        scan = ScannedAnswer.fromUpstream(reply);
      } catch (WireException e) {
        failures.warn("malformed answer from the owner node of " + key, e);
      }
    }
    if (scan != null && scan.rcode() == Rcode.REFUSED) {
      refusals.warn("an owner node refused a lookup of " + key + ": its access_control must allow"
          + " the other nodes' addresses (shoal_cluster_remote_lookups_total{outcome=\"refused\"})");
      metrics.remoteLookup("refused");
      return null;
    }
    if (scan == null) {
      metrics.remoteLookup("timeout");
    }
    return scan;
  }

  /** The owner answered SERVFAIL: it asked the same upstreams, so the name fails here too. */
  void failed() {
    metrics.remoteLookup("failed");
  }

  /** The owner's upstreams failed and it answered with its stale answer (serve-stale). */
  void servedStale() {
    metrics.remoteLookup("stale");
  }

  /** The owner answered, asked at {@code askedNanos}. */
  void answered(long askedNanos) {
    metrics.remoteLookup("answered");
    metrics.remoteLookupTime(System.nanoTime() - askedNanos);
  }

  /**
   * Keeps {@code copy} of the owner's answer in the near cache, not in the profile's cache: that
   * one holds what this node owns, and the cluster's capacity is the sum of the nodes' caches only
   * if copies stay out.
   */
  void keepCopy(CacheKey key, CachedAnswer copy) {
    owners.keepCopy(key, copy);
  }
}

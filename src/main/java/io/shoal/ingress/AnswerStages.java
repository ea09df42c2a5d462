package io.shoal.ingress;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.local.LocalData;
import io.shoal.policy.ResponsePolicy;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import java.net.InetSocketAddress;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The stages that answer from what this node holds: its local data, its response policy, and its
 * caches. A hit ends in the {@link Cache} stage, on the thread that read the query.
 */
final class AnswerStages {
  private AnswerStages() {}

  /** Does local data have the name? Answered (AA=1, NODATA for another type). Only with local data. */
  static final class Local extends Stage {
    private final LocalData local;

    Local(LocalData local) {
      super("local_data");
      this.local = local;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      byte[] own = local.answer(query, protocol.sizeLimit(query));
      return own == null ? Verdict.PASS : answer(reply, own, client);
    }
  }

  /** Does the response policy (blocklists) have the name? Its answer, or dropped. Only with a policy. */
  static final class Policy extends Stage {
    private final ResponsePolicy policy;

    Policy(ResponsePolicy policy) {
      super("policy");
      this.policy = policy;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      byte[] own = policy.answer(query, protocol.sizeLimit(query));
      if (own == null) {
        return Verdict.PASS;
      }
      return own == ResponsePolicy.DROP ? drop(reply) : answer(reply, own, client);
    }
  }

  /**
   * Does the near cache hold a copy of the answer another node owns? Answered as a hit. Cluster
   * mode with a near cache only.
   *
   * <p>In a cluster, most names are other nodes' (two in three with three nodes): this node's copy
   * of such an answer is looked up first, so a hit on it costs one look-up, as a hit on an owned
   * name does, rather than a failed look-up in the answer cache and a ring look-up before it. The
   * near cache only holds copies of answers other nodes owned when they were fetched. An owner
   * lookup (from a peer) is this node's to resolve, never answered from a copy.
   */
  static final class NearCache extends Stage {
    private final OwnerDirectory owners;

    private final LongSupplier clock;

    NearCache(OwnerDirectory owners, LongSupplier clock) {
      super("near_cache");
      this.owners = owners;
      this.clock = clock;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      if (query.fromPeer() || !owners.cachesServable()) {
        return Verdict.PASS;
      }
      long now = clock.getAsLong();
      CachedAnswer copy = owners.nearHit(query.key(), now);
      if (copy == null) {
        return Verdict.PASS;
      }
      // as a hit on an owned name: rendered into the socket's own buffer on the reading thread
      reply.sendHit(copy, query, now, protocol.sizeLimit(query), client);
      return Verdict.ANSWERED;
    }
  }

  /**
   * Does the profile's cache hold the answer? Answered right there (counted as a hit, else as a
   * miss), and a hit near its expiry is prefetched when this node owns the name (with prefetch on).
   */
  static final class Cache extends Stage {
    private final ProfileTable profiles;
    private final LongSupplier clock;
    private final OwnerDirectory owners;
    /** Null when the plan has prefetch off. */
    private final Prefetch prefetch;
    /** Keys this node asks no other node for: it owns them, or it is not in a cluster (see Prefetch). */
    private final Predicate<CacheKey> ownedHere;
    private final Workers workers;

    Cache(ProfileTable profiles, LongSupplier clock, OwnerDirectory owners, Prefetch prefetch, Workers workers) {
      super(prefetch == null ? "cache" : "cache+prefetch");
      this.profiles = profiles;
      this.clock = clock;
      this.owners = owners;
      this.prefetch = prefetch;
      this.ownedHere = key -> owners.ownerOf(key) == null;
      this.workers = workers;
    }

    /**
     * Warms the caches for the first {@code count} of {@code packets} (null ones skipped), as read,
     * before any of them is parsed: see {@link io.shoal.cache.AnswerCache#warm}. Returns what the
     * warm reads gave, to be discarded.
     */
    int warm(byte[][] packets, int count) {
      // Two passes: the hashes first (a loop of arithmetic per name), then the reads alone, so
      // that the reads of one query are not kept waiting behind the next one's hashing and the
      // CPU has the reads of the whole batch in flight at once.
      int[] hashes = new int[count];
      AnswerCache[] caches = new AnswerCache[count];
      for (int i = 0; i < count; i++) {
        byte[] packet = packets[i];
        int hash = packet == null ? 0 : CacheKey.hashOfQuery(packet);
        Profile profile = hash == 0 ? null : profiles.matchQuestion(packet);
        if (profile != null) {
          hashes[i] = hash;
          caches[i] = profile.cache();
        }
      }
      int sink = 0;
      for (int i = 0; i < count; i++) {
        if (caches[i] != null) {
          sink += caches[i].warm(hashes[i]);
        }
      }
      return sink;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      Profile profile = profiles.match(query.key());
      if (!owners.cachesServable()) {
        // A cluster node back from being away, that has not applied the flushes made meanwhile:
        // its caches may hold flushed answers, so every query is a miss until it has.
        if (!query.fromPeer() || query.recursionDesired()) {
          profile.cacheMetrics().miss();
        }
        return Verdict.PASS;
      }
      long now = clock.getAsLong();
      CachedAnswer hit = profile.cache().get(query.key(), now);
      if (hit == null) {
        if (!query.fromPeer()) {
          profile.cacheMetrics().miss();
          owners.nearMissed(query.key());
        } else if (query.recursionDesired()) {
          // A joining node asking what this one still holds (RD=0) is not a miss anyone waits on.
          profile.cacheMetrics().miss();
        }
        return Verdict.PASS;
      }
      profile.cacheMetrics().hit();
      // Not for RD=0: probing the cache must not cost the upstreams anything.
      if (prefetch != null && query.recursionDesired() && prefetch.claim(query.key(), hit, now, ownedHere)) {
        workers.get(workers.partition(query.key())).tell(new IngressWorker.Refresh(query));
      }
      reply.sendHit(hit, query, now, protocol.sizeLimit(query), client);
      return Verdict.ANSWERED;
    }
  }
}

package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.ServeStaleSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.ratelimit.MissBudget;
import io.shoal.upstream.DatagramSender;
import io.shoal.upstream.Upstream;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.net.InetSocketAddress;
import java.util.function.LongSupplier;

/**
 * The stages a miss goes through on the thread that read it: answered there when it can be
 * (RD=0, a kept denial, over a miss budget), else admitted to its key's worker and handed to the
 * key's owner node or to that worker.
 */
final class MissStages {
  private MissStages() {}

  /**
   * Did the client ask for recursion? A miss with RD=0 asks what is cached, and shoal has nothing
   * of its own to answer with: REFUSED (with an extended error saying why). Nothing goes upstream:
   * probing the cache (snooping) costs the upstreams no load.
   */
  static final class NoRecursion extends Stage {
    private final ServerMetrics metrics;

    NoRecursion(ServerMetrics metrics) {
      super("rd0_refused");
      this.metrics = metrics;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      if (query.recursionDesired()) {
        return Verdict.PASS;
      }
      // A joining node asking what this one still holds (peerCacheQuery) is told it holds none;
      // that is warm join at work, not a client refused.
      if (!query.fromPeer()) {
        metrics.refused(ServerMetrics.NO_RECURSION);
      }
      return answer(reply, query.refused(ExtendedError.NOT_AUTHORITATIVE), client);
    }
  }

  /**
   * Does a denial the upstream proved before cover the name (RFC 8198)? Answered with it. Before
   * the miss budget, the worker and any owner node: a flood of random names under a signed zone is
   * answered where it arrived, costs no upstream query and no budget, and never queues behind real
   * misses. Not cached: the proof answers the next such name as fast, and a flood's names would
   * only push real answers out.
   */
  static final class Denials extends Stage {
    private final ProfileTable profiles;
    private final LongSupplier clock;

    Denials(ProfileTable profiles, LongSupplier clock) {
      super("dnssec_denials");
      this.profiles = profiles;
      this.clock = clock;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      long now = clock.getAsLong();
      Upstream.Denial denial = profiles.match(query.key()).upstream().denial(query, now);
      if (denial == null) {
        return Verdict.PASS;
      }
      byte[] wire;
      try {
        CachedAnswer answer = CachedAnswer.of(ScannedAnswer.fromUpstream(denial.wire()), now, denial.expiresAtMillis());
        wire = answer.render(query, now, protocol.sizeLimit(query));
      } catch (WireException e) {
        return Verdict.PASS; // not a denial we can send: the miss goes its usual way
      }
      return answer(reply, wire, client);
    }
  }

  /**
   * Is the miss over its client's or its zone's miss budget? SERVFAIL saying which (or the stale
   * answer, when serve-stale has one). Only when a budget is set. A peer's owner lookup carries
   * many clients' misses: the asking node applied their budgets.
   */
  static final class MissBudgets extends Stage {
    private static final ExtendedError OVER_CLIENT_BUDGET = new ExtendedError(0, "over this client's miss budget");
    private static final ExtendedError OVER_ZONE_BUDGET = new ExtendedError(0, "over this zone's miss budget");

    private final MissBudget budget;
    private final ProfileTable profiles;
    private final LongSupplier clock;
    private final ServeStaleSettings serveStale;
    private final OwnerDirectory owners;
    private final ServerMetrics metrics;

    MissBudgets(QueryPlan plan, LongSupplier clock, OwnerDirectory owners, ServerMetrics metrics) {
      super("miss_budget");
      this.budget = plan.missBudget();
      this.profiles = plan.profiles();
      this.clock = clock;
      this.serveStale = plan.serveStale();
      this.owners = owners;
      this.metrics = metrics;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      if (query.fromPeer()) {
        return Verdict.PASS;
      }
      Profile profile = profiles.match(query.key());
      String over = budget.overBudget(query.key(), client.getAddress(), profile.cache().evictedLately(query.key()));
      if (over == null) {
        return Verdict.PASS;
      }
      metrics.overMissBudget(over);
      byte[] stale = staleOverBudget(query, protocol, profile);
      return answer(reply, stale != null ? stale
          : query.servfail(over == MissBudget.CLIENT ? OVER_CLIENT_BUDGET : OVER_ZONE_BUDGET), client);
    }

    /**
     * The stale answer (RFC 8767) a miss over its budget gets instead of a SERVFAIL, when
     * serve-stale is on and the cache still holds the name expired less than max_stale ago; else
     * null. It is what the client would get if the upstreams failed, and it costs them nothing.
     */
    private byte[] staleOverBudget(DnsQuery query, Protocol protocol, Profile profile) {
      if (!serveStale.enabled() || !owners.cachesServable()) {
        return null;
      }
      CachedAnswer old = profile.cache().get(query.key(), clock.getAsLong() - serveStale.maxStale().toMillis());
      return old != null && old.servableStale() ? old.renderStale(query, protocol.sizeLimit(query)) : null;
    }
  }

  /**
   * Has the key's worker room for one more miss? Past its budget a datagram is dropped (the client
   * retries); a stream's query holds a slot of its connection's pipeline, so it gets SERVFAIL at
   * once. Admitted, the query's reply is owed from here on (a stream bounds the wait).
   */
  static final class Admission extends Stage {
    private final Workers workers;
    private final long guardMillis;

    /** @param guardMillis how long a stream's query may wait for its worker (see {@link QueryPlan}) */
    Admission(Workers workers, long guardMillis) {
      super("worker_admission");
      this.workers = workers;
      this.guardMillis = guardMillis;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      if (!workers.admit(workers.partition(query.key()))) {
        return protocol.stream() ? answer(reply, query.servfail(), client) : drop(reply);
      }
      reply.owed(query, guardMillis);
      return Verdict.PASS;
    }
  }

  /**
   * Does another node own the key? Asked of it from this thread ({@link DirectOwnerLookups}), its
   * reply sent from the thread that receives it. Cluster mode only.
   */
  static final class OwnerLookup extends Stage {
    private final DirectOwnerLookups direct;
    private final ProfileTable profiles;
    private final Workers workers;

    OwnerLookup(DirectOwnerLookups direct, ProfileTable profiles, Workers workers) {
      super("owner_lookup");
      this.direct = direct;
      this.profiles = profiles;
      this.workers = workers;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      OwnerDirectory.Owner owner = direct.ownerOf(query);
      if (owner == null) {
        return Verdict.PASS;
      }
      int w = workers.partition(query.key());
      direct.ask(owner, profiles.match(query.key()), new IngressWorker.Resolve(query, client, protocol, reply),
          workers.pending(w), workers.get(w), arrivedOn instanceof DatagramSender socket ? socket : null);
      return Verdict.OWED;
    }
  }

  /**
   * The end of the chain: the miss goes to the worker that owns its key (the one {@link Admission}
   * counted it on), which owes its reply.
   */
  static final class HandOff extends Stage {
    private final Workers workers;

    HandOff(Workers workers) {
      super("worker");
      this.workers = workers;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      workers.get(workers.partition(query.key())).tell(new IngressWorker.Resolve(query, client, protocol, reply));
      return Verdict.OWED;
    }
  }
}

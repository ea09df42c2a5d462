package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.ServeStaleSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.ratelimit.MissBudget;
import io.shoal.upstream.DatagramSender;
import io.shoal.upstream.Upstream;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;

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
    Verdict decide(QueryContext q) {
      DnsQuery query = q.query;
      if (query.recursionDesired()) {
        return Verdict.PASS;
      }
      // A joining node asking what this one still holds (peerCacheQuery) is told it holds none;
      // that is warm join at work, not a client refused.
      if (!query.fromPeer()) {
        metrics.refused(ServerMetrics.NO_RECURSION);
      }
      return q.answer(query.refused(ExtendedError.NOT_AUTHORITATIVE));
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
    Denials() {
      super("dnssec_denials");
    }

    @Override
    Verdict decide(QueryContext q) {
      long now = q.now();
      Upstream.Denial denial = q.profile().upstream().denial(q.query, now);
      if (denial == null) {
        return Verdict.PASS;
      }
      byte[] reply;
      try {
        CachedAnswer answer = CachedAnswer.of(ScannedAnswer.fromUpstream(denial.wire()), now, denial.expiresAtMillis());
        reply = answer.render(q.query, now, q.sizeLimit());
      } catch (WireException e) {
        return Verdict.PASS; // not a denial we can send: the miss goes its usual way
      }
      return q.answer(reply);
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
    private final ServeStaleSettings serveStale;
    private final OwnerDirectory owners;
    private final ServerMetrics metrics;

    MissBudgets(MissBudget budget, ServeStaleSettings serveStale, OwnerDirectory owners, ServerMetrics metrics) {
      super("miss_budget");
      this.budget = budget;
      this.serveStale = serveStale;
      this.owners = owners;
      this.metrics = metrics;
    }

    @Override
    Verdict decide(QueryContext q) {
      DnsQuery query = q.query;
      if (query.fromPeer()) {
        return Verdict.PASS;
      }
      Profile profile = q.profile();
      String over = budget.overBudget(query.key(), q.client.getAddress(), profile.cache().evictedLately(query.key()));
      if (over == null) {
        return Verdict.PASS;
      }
      metrics.overMissBudget(over);
      byte[] stale = staleOverBudget(q, profile);
      return q.answer(stale != null ? stale
          : query.servfail(over == MissBudget.CLIENT ? OVER_CLIENT_BUDGET : OVER_ZONE_BUDGET));
    }

    /**
     * The stale answer (RFC 8767) a miss over its budget gets instead of a SERVFAIL, when
     * serve-stale is on and the cache still holds the name expired less than max_stale ago; else
     * null. It is what the client would get if the upstreams failed, and it costs them nothing.
     */
    private byte[] staleOverBudget(QueryContext q, Profile profile) {
      if (!serveStale.enabled() || !owners.cachesServable()) {
        return null;
      }
      CachedAnswer old = profile.cache().get(q.query.key(), q.now() - serveStale.maxStale().toMillis());
      return old != null && old.servableStale() ? old.renderStale(q.query, q.sizeLimit()) : null;
    }
  }

  /**
   * Has the key's worker room for one more miss? Past its budget a datagram is dropped (the client
   * retries); a stream's query holds a slot of its connection's pipeline, so it gets SERVFAIL at
   * once. Admitted, the query's reply is owed from here on (a stream bounds the wait).
   */
  static final class Admission extends Stage {
    private final Workers workers;

    Admission(Workers workers) {
      super("worker_admission");
      this.workers = workers;
    }

    @Override
    Verdict decide(QueryContext q) {
      int w = workers.partition(q.query.key());
      if (!workers.admit(w)) {
        return q.protocol.stream() ? q.answer(q.query.servfail()) : q.drop();
      }
      q.worker = w;
      q.reply.owed(q.query, q.plan.streamGuard().toMillis());
      return Verdict.PASS;
    }
  }

  /**
   * Does another node own the key? Asked of it from this thread ({@link DirectOwnerLookups}), its
   * reply sent from the thread that receives it. Cluster mode only.
   */
  static final class OwnerLookup extends Stage {
    private final DirectOwnerLookups direct;
    private final Workers workers;

    OwnerLookup(DirectOwnerLookups direct, Workers workers) {
      super("owner_lookup");
      this.direct = direct;
      this.workers = workers;
    }

    @Override
    Verdict decide(QueryContext q) {
      OwnerDirectory.Owner owner = direct.ownerOf(q.query);
      if (owner == null) {
        return Verdict.PASS;
      }
      direct.ask(owner, q.profile(), new IngressWorker.Resolve(q.query, q.client, q.protocol, q.reply),
          workers.pending(q.worker), workers.get(q.worker),
          q.arrivedOn instanceof DatagramSender socket ? socket : null);
      return Verdict.OWED;
    }
  }

  /** The end of the chain: the miss goes to the worker that owns its key, which owes its reply. */
  static final class HandOff extends Stage {
    private final Workers workers;

    HandOff(Workers workers) {
      super("worker");
      this.workers = workers;
    }

    @Override
    Verdict decide(QueryContext q) {
      workers.get(q.worker).tell(new IngressWorker.Resolve(q.query, q.client, q.protocol, q.reply));
      return Verdict.OWED;
    }
  }
}

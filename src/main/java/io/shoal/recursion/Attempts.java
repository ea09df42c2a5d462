package io.shoal.recursion;

import io.shoal.upstream.UpstreamException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Type;

/**
 * One question of a {@link Resolution} to one zone's servers: asks them one address after
 * another until one gives a usable reply, marking the lame and the timed-out; looks up the
 * addresses of name servers the parent gave no glue for; asks the time-outs again, in up to
 * three rounds, before the zone is given up. Holds the addresses tried so far and
 * the NS names looked up for the question.
 */
final class Attempts {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Resolution.class);

  /** Rounds over a zone's addresses when they time out: the first, and two more. */
  private static final int MAX_ROUNDS = 3;

  private final RecursiveUpstream r;
  private final Budget budget;
  private final Resolution resolution;
  private final ZoneCut cut;
  private final Name name;
  private final int type;
  private final int depth;
  private final Set<InetSocketAddress> tried = new HashSet<>();
  private final Set<Name> lookedUp = new HashSet<>();
  /** Addresses that timed out: asked once more, with a longer wait, before the zone is given up. */
  private final Set<InetSocketAddress> timedOut = new HashSet<>();
  private int rounds;
  private String lastFailure = "no address";

  /** @param resolution looks up the addresses of name servers without glue, with its budget */
  Attempts(RecursiveUpstream r, Budget budget, Resolution resolution, ZoneCut cut, Name name, int type, int depth) {
    this.r = r;
    this.budget = budget;
    this.resolution = resolution;
    this.cut = cut;
    this.name = name;
    this.type = type;
    this.depth = depth;
  }

  /** Asks the next address (after a name server lookup when none is left untried). */
  CompletableFuture<Message> next() {
    long now = System.nanoTime();
    List<InetSocketAddress> candidates = new ArrayList<>();
    for (Name ns : cut.nsNames()) {
      for (InetSocketAddress a : addresses(ns, now)) {
        if (!tried.contains(a) && !candidates.contains(a)) {
          candidates.add(a);
        }
      }
    }
    if (!candidates.isEmpty()) {
      InetSocketAddress a = r.servers.choose(candidates, cut.zone().toString(), now);
      tried.add(a);
      return send(a);
    }
    for (Name ns : cut.nsNames()) {
      if (lookedUp.contains(ns) || cut.glue().containsKey(ns) || r.cuts.host(ns, now) != null) {
        continue;
      }
      if (ns.subdomain(cut.zone())) {
        continue; // inside the zone, without glue: only the zone's own servers could say
      }
      lookedUp.add(ns);
      if (!budget.nsName(cut.zone())) {
        throw RecursionLimit.hit(Budget.NS_NAMES, "more than " + r.settings.maxNsNames()
            + " name servers of " + cut.zone() + " to look up");
      }
      budget.depth(depth + 1);
      if (!budget.startLookup(ns)) {
        continue; // already being looked up further up this resolution: a dependency loop
      }
      return resolution.lookUp(ns, depth + 1).thenCompose(found -> next());
    }
    if (!timedOut.isEmpty() && ++rounds < MAX_ROUNDS) {
      // A lost datagram is not a dead server: the time-outs are asked again (each waits twice
      // as long now, see AuthorityServers#timeoutNanos), within the budget and deadline.
      tried.removeAll(timedOut);
      timedOut.clear();
      return next();
    }
    throw RecursionLimit.unreachable("no authority of " + cut.zone() + " answered (" + lastFailure + ")");
  }

  private List<InetSocketAddress> addresses(Name ns, long now) {
    List<InetSocketAddress> glue = cut.glue().get(ns);
    if (glue != null) {
      return glue;
    }
    ZoneCuts.Host h = r.cuts.host(ns, now);
    return h == null ? List.of() : h.addresses();
  }

  private CompletableFuture<Message> send(InetSocketAddress a) {
    budget.send();
    if (log.isDebugEnabled()) {
      log.debug("asking {} {} {} (zone {})", a.getAddress().getHostAddress(), name, Type.string(type), cut.zone());
    }
    long now = System.nanoTime();
    long deadline = Math.min(now + r.servers.timeoutNanos(a, r.attemptMaxNanos), budget.deadlineNanos);
    return AuthorityQuery.ask(r.sockets, a, name, type, deadline)
        .handleAsync((reply, failure) -> {
          if (failure != null) {
            Throwable cause = Resolution.unwrap(failure);
            String outcome = cause instanceof UpstreamException ue ? ue.outcome() : "error";
            r.metrics.query(outcome);
            if (outcome.equals("timeout")) {
              r.servers.timedOut(a, System.nanoTime());
              timedOut.add(a);
            }
            lastFailure = outcome + " from " + a.getAddress().getHostAddress();
            return next();
          }
          r.servers.answered(a, reply.rttNanos());
          r.metrics.rtt(reply.rttNanos());
          String lame = ReplyRecords.lameReason(reply.message(), cut, name);
          if (lame != null) {
            r.metrics.query("lame");
            r.metrics.lame(lame);
            r.servers.lame(a, cut.zone().toString(), System.nanoTime());
            lastFailure = lame + " from " + a.getAddress().getHostAddress();
            return next();
          }
          r.metrics.query("ok");
          return CompletableFuture.completedFuture(reply.message());
        }, r.executor)
        .thenCompose(f -> f);
  }
}

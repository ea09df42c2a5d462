package io.shoal.ingress;

import akka.actor.typed.ActorRef;
import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.upstream.DatagramSender;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.Rcode;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;

/**
 * In cluster mode, a miss for a key another node owns, asked of that node by the thread that read
 * the query and answered by the thread that reads the owner's reply, with no worker in between.
 *
 * <p>Through a worker, such a miss waited twice for another thread: the reading thread handed it to
 * the worker's mailbox, and the owner's reply came back through it to be sent. On a node held to a
 * fraction of a CPU (a Kubernetes limit), each wait can last a throttled CFS period: a churn
 * cluster paced at half its capacity under 0.25 CPU a node had its owner lookups' median round
 * trip within 25 ms through the workers and within 1 ms this way (p90 within 100 and 50 ms). Here
 * the reading thread sends the question to the owner itself, and the owner's plain answer
 * (NOERROR or NXDOMAIN, fresh) is copied into the near cache and sent to the client from the
 * thread that received it.
 *
 * <p>Everything else the owner's reply may mean is left to the key's worker, as if it had asked
 * ({@link IngressWorker.OwnerAnswered}): no reply in time or a malformed one (the worker asks the
 * upstreams itself), REFUSED, SERVFAIL (this node's failure too, served stale if it can), or the
 * owner's stale answer. Concurrent misses for the same key each ask the owner here (the owner
 * coalesces them into one upstream query of its own); the workers' coalescing is for upstream
 * queries, which this path never sends.
 */
final class DirectOwnerLookups {
  private static final FailureLog failures =
      new FailureLog(LoggerFactory.getLogger(DirectOwnerLookups.class), 60);

  private final OwnerLookups lookups;
  private final LongSupplier clock;

  /** @param timeout how long an owner's answer is waited for */
  DirectOwnerLookups(OwnerDirectory owners, Duration timeout, ServerMetrics metrics, LongSupplier clock) {
    this.lookups = new OwnerLookups(owners, timeout, metrics, failures);
    this.clock = clock;
  }

  /** The node to ask for {@code query}'s key, or null when this node resolves it itself. */
  OwnerDirectory.Owner ownerOf(DnsQuery query) {
    return lookups.ownerOf(query);
  }

  /**
   * Asks {@code owner} for {@code r}'s answer and sends it to {@code r}'s client when it is a plain
   * one, counting the query off {@code pending}; anything else goes to {@code worker}, which then
   * owes the reply (and counts it off).
   *
   * @param via the listening UDP socket the query came in on, to send the lookup from (see {@link
   *     OwnerDirectory#ask(OwnerDirectory.Owner, io.shoal.wire.DnsQuery, Duration, DatagramSender)});
   *     null for a query that came over a stream
   */
  void ask(OwnerDirectory.Owner owner, Profile profile, IngressWorker.Resolve r, AtomicInteger pending,
      ActorRef<IngressWorker.Command> worker, DatagramSender via) {
    long asked = System.nanoTime();
    lookups.ask(owner, r.query(), via).whenComplete((reply, failure) -> {
      boolean sent = false;
      try {
        sent = reply != null && answer(profile, r, reply, asked);
      } catch (RuntimeException e) {
        failures.warn("owner answer for " + r.query().key() + " not sent directly", e);
      }
      if (sent) {
        pending.decrementAndGet();
      } else {
        worker.tell(new IngressWorker.OwnerAnswered(r, reply, asked));
      }
    });
  }

  /** Sends the owner's {@code reply} to {@code r}'s client if it is a fresh NOERROR or NXDOMAIN; false otherwise. */
  private boolean answer(Profile profile, IngressWorker.Resolve r, byte[] reply, long asked) {
    if (ScannedAnswer.saysStale(reply)) {
      return false;
    }
    ScannedAnswer scan;
    try {
      scan = ScannedAnswer.fromUpstream(reply);
    } catch (WireException e) {
      return false; // the worker logs and counts it
    }
    if (scan.rcode() != Rcode.NOERROR && scan.rcode() != Rcode.NXDOMAIN) {
      return false;
    }
    lookups.answered(asked);
    long now = clock.getAsLong();
    CachedAnswer copy = CacheFill.kept(profile, scan, now);
    if (copy != null) {
      lookups.keepCopy(r.query().key(), copy);
    }
    CachedAnswer answer = copy != null ? copy : CacheFill.passedOn(scan, now);
    r.replyTo().send(answer.renderFetched(r.query(), now, r.protocol().sizeLimit(r.query()),
        ExtendedError.UPSTREAM_FAILED), r.client());
    return true;
  }
}

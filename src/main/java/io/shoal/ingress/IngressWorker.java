package io.shoal.ingress;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.upstream.UpstreamClient;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;

/**
 * Answers the queries of one partition of the key space. A hit is read straight from the cache
 * and rendered for the client; a miss goes upstream once per key however many clients ask while
 * it is in flight, and every waiter gets the answer, then the answer fills the cache.
 */
public final class IngressWorker extends AbstractBehavior<IngressWorker.Command> {

  /** Messages to a worker. */
  public interface Command {}

  /** Answer {@code query} from {@code client}; the reply goes to {@code replyTo}. */
  public record Resolve(DnsQuery query, InetSocketAddress client, Transport transport, ActorRef<Reply> replyTo)
      implements Command {}

  private record UpstreamDone(CacheKey key, Profile profile, UpstreamClient.Outcome outcome) implements Command {}

  private record FillDone(CacheKey key, CachedAnswer answer) implements Command {}

  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(IngressWorker.class), 10);

  private final ProfileTable profiles;
  private final FillMode fillMode;
  private final LongSupplier clock;
  private final AtomicInteger pending;
  private final ServerMetrics metrics;
  private final Map<CacheKey, List<Resolve>> inFlight = new HashMap<>();

  /**
   * @param clock epoch milliseconds (injected so tests can move time)
   * @param pending this worker's count of queries not yet answered, shared with {@link Ingress}
   */
  public static Behavior<Command> create(
      ProfileTable profiles, FillMode fillMode, LongSupplier clock, AtomicInteger pending, ServerMetrics metrics) {
    return Behaviors.setup(ctx -> new IngressWorker(ctx, profiles, fillMode, clock, pending, metrics));
  }

  private IngressWorker(
      ActorContext<Command> context, ProfileTable profiles, FillMode fillMode, LongSupplier clock,
      AtomicInteger pending, ServerMetrics metrics) {
    super(context);
    this.profiles = profiles;
    this.fillMode = fillMode;
    this.clock = clock;
    this.pending = pending;
    this.metrics = metrics;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Resolve.class, this::onResolve)
        .onMessage(UpstreamDone.class, this::onUpstreamDone)
        .onMessage(FillDone.class, this::onFillDone)
        .build();
  }

  private Behavior<Command> onResolve(Resolve r) {
    try {
      resolve(r);
    } catch (RuntimeException e) {
      // One bad query must not take the worker (and its in-flight waiters) down.
      failures.warn("query " + r.query().key() + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      reply(r, r.query().servfail());
    }
    return this;
  }

  private void resolve(Resolve r) {
    CacheKey key = r.query().key();
    Profile profile = profiles.match(key);
    long now = clock.getAsLong();
    CachedAnswer hit = profile.cache().get(key, now);
    if (hit != null) {
      profile.cacheMetrics().hit();
      reply(r, hit.render(r.query(), now, r.transport().sizeLimit(r.query())));
      return;
    }
    profile.cacheMetrics().miss();
    List<Resolve> waiters = inFlight.get(key);
    if (waiters != null) {
      waiters.add(r);
      return;
    }
    waiters = new ArrayList<>(2);
    waiters.add(r);
    inFlight.put(key, waiters);
    getContext().ask(
        UpstreamClient.Outcome.class,
        profile.upstream(),
        profile.upstreamDeadline(),
        replyTo -> new UpstreamClient.Forward(r.query(), replyTo),
        (outcome, failure) -> new UpstreamDone(key, profile,
            outcome != null ? outcome : new UpstreamClient.Failed("no upstream answer: " + failure.getMessage())));
  }

  private Behavior<Command> onUpstreamDone(UpstreamDone done) {
    List<Resolve> waiters = inFlight.get(done.key());
    if (waiters == null) {
      return this;
    }
    try {
      if (!(done.outcome() instanceof UpstreamClient.Answered answered)) {
        servfailAll(done.key());
        return this;
      }
      ScannedAnswer scan;
      try {
        scan = ScannedAnswer.scan(answered.wire());
      } catch (WireException e) {
        failures.warn("malformed answer from " + answered.server() + " for " + done.key(), e);
        servfailAll(done.key());
        return this;
      }
      long now = clock.getAsLong();
      long seconds = done.profile().ttlRules().cacheSeconds(scan);
      if (seconds <= 0) {
        // Not cacheable: pass it on with the upstream's own TTLs.
        answerAll(done.key(), CachedAnswer.of(scan, now, now + 0xFFFF_FFFFL * 1000));
        return this;
      }
      CachedAnswer answer = CachedAnswer.of(scan, now, now + seconds * 1000);
      if (fillMode == FillMode.WRITE_THROUGH) {
        getContext().pipeToSelf(done.profile().cache().fill(done.key(), answer),
            (ok, failure) -> new FillDone(done.key(), answer));
      } else {
        done.profile().cache().fill(done.key(), answer);
        answerAll(done.key(), answer);
      }
    } catch (RuntimeException e) {
      failures.warn("answer for " + done.key() + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      servfailAll(done.key());
    }
    return this;
  }

  private Behavior<Command> onFillDone(FillDone done) {
    answerAll(done.key(), done.answer());
    return this;
  }

  private void answerAll(CacheKey key, CachedAnswer answer) {
    List<Resolve> waiters = inFlight.remove(key);
    if (waiters == null) {
      return;
    }
    long now = clock.getAsLong();
    for (Resolve w : waiters) {
      reply(w, answer.render(w.query(), now, w.transport().sizeLimit(w.query())));
    }
  }

  private void servfailAll(CacheKey key) {
    List<Resolve> waiters = inFlight.remove(key);
    if (waiters != null) {
      for (Resolve w : waiters) {
        reply(w, w.query().servfail());
      }
    }
  }

  private void reply(Resolve r, byte[] wire) {
    pending.decrementAndGet();
    r.replyTo().tell(new Reply(wire, r.client()));
  }
}

package io.shoal.ingress;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Scheduler;
import akka.actor.typed.javadsl.AskPattern;
import io.shoal.cluster.PeerAnswer;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ReplyPolicy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The front door shared by the UDP and TCP transports: validates a packet, answers bad ones
 * (FORMERR, NOTIMP, REFUSED) or drops them, and hands good ones to the worker that owns their
 * cache key. Each worker holds at most {@code maxPending} queries; beyond that a query is dropped
 * and counted, so overload costs answers, never unbounded memory.
 */
public final class Ingress {
  private final List<ActorRef<IngressWorker.Command>> workers;
  private final AtomicInteger[] pending;
  private final int maxPending;
  private final ServerMetrics metrics;
  private final Scheduler scheduler;
  private final Duration askTimeout;
  private final ReplyPolicy policy;

  public Ingress(
      List<ActorRef<IngressWorker.Command>> workers, AtomicInteger[] pending, int maxPending,
      ServerMetrics metrics, Scheduler scheduler, Duration askTimeout) {
    this(workers, pending, maxPending, metrics, scheduler, askTimeout, ReplyPolicy.DEFAULT);
  }

  /** @param policy the UDP reply cap and the class CH answers */
  public Ingress(
      List<ActorRef<IngressWorker.Command>> workers, AtomicInteger[] pending, int maxPending,
      ServerMetrics metrics, Scheduler scheduler, Duration askTimeout, ReplyPolicy policy) {
    this.policy = policy;
    this.workers = List.copyOf(workers);
    this.pending = pending;
    this.maxPending = maxPending;
    this.metrics = metrics;
    this.scheduler = scheduler;
    this.askTimeout = askTimeout;
  }

  /** Takes a datagram; any reply is told to {@code replyTo}. */
  public void offer(byte[] packet, InetSocketAddress client, ActorRef<Reply> replyTo) {
    DnsQuery query;
    try {
      query = DnsQuery.parse(packet, policy);
    } catch (BadQuery bad) {
      if (bad.dropped()) {
        metrics.dropped(bad.reason());
      } else {
        replyTo.tell(new Reply(bad.reply(), client));
      }
      return;
    }
    int w = partition(query);
    if (!admit(w)) {
      return;
    }
    workers.get(w).tell(new IngressWorker.Resolve(query, client, Protocol.UDP, replyTo));
  }

  /** Takes a query from a TCP stream; completes with the reply, or empty when it is dropped. */
  public CompletionStage<Optional<byte[]>> ask(byte[] packet, InetSocketAddress client) {
    DnsQuery query;
    try {
      query = DnsQuery.parse(packet, policy);
    } catch (BadQuery bad) {
      if (bad.dropped()) {
        metrics.dropped(bad.reason());
        return CompletableFuture.completedFuture(Optional.empty());
      }
      return CompletableFuture.completedFuture(Optional.of(bad.reply()));
    }
    int w = partition(query);
    if (!admit(w)) {
      return CompletableFuture.completedFuture(Optional.of(query.servfail()));
    }
    return AskPattern.<IngressWorker.Command, Reply>ask(
            workers.get(w),
            replyTo -> new IngressWorker.Resolve(query, client, Protocol.TCP, replyTo),
            askTimeout,
            scheduler)
        .handle((reply, failure) -> Optional.of(reply != null ? reply.wire() : query.servfail()));
  }

  /** A lookup from another cluster node for a key this node owns. */
  public void resolveForPeer(DnsQuery query, ActorRef<PeerAnswer> replyTo) {
    workers.get(partition(query)).tell(new IngressWorker.PeerResolve(query, replyTo));
  }

  private boolean admit(int worker) {
    if (pending[worker].incrementAndGet() > maxPending) {
      pending[worker].decrementAndGet();
      metrics.dropped(ServerMetrics.OVERLOAD);
      return false;
    }
    return true;
  }

  private int partition(DnsQuery query) {
    // Spread the key's hash: identical questions must meet in one worker to coalesce.
    int h = query.key().hashCode() * 0x9E3779B9;
    return Math.floorMod(h ^ (h >>> 16), workers.size());
  }

  /** Queries accepted but not yet answered, over all workers. */
  public int pending() {
    int sum = 0;
    for (AtomicInteger p : pending) {
      sum += p.get();
    }
    return sum;
  }
}

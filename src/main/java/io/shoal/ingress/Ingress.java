package io.shoal.ingress;

import akka.actor.typed.ActorRef;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.metrics.ServerMetrics;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The front door shared by every transport (UDP sockets, TCP, TLS and HTTPS streams), run on the
 * thread that read the query: it passes the query through the {@link StageChain} of its plan, whose
 * stages each answer it, drop it, or pass it on (access control, validation, local data, policy,
 * the caches, RD=0, kept DNSSEC denials, miss budgets, and at the end the hand-off of a miss to its
 * key's owner node or worker; {@link StageChain#of} lists them in order). What a reload changes
 * comes in one {@link QueryPlan}, read once per query, with the chain built for it.
 */
public final class Ingress {
  private static final Logger log = LoggerFactory.getLogger(Ingress.class);

  private final Workers workers;
  private final Prefetch prefetch;
  private final StageChain.Parts parts;
  /** What a reload replaces, with its stages; read once per query. */
  private volatile StageChain chain;

  /**
   * @param plan the profiles, access control, local data, policy and logs queries start with
   * @param clock epoch milliseconds (injected so tests can move time)
   * @param pending each worker's count of queries not yet answered, shared with the worker
   * @param maxPending the most queries a worker holds; beyond that a query is dropped and counted
   * @param prefetch the claims of prefetches under way, kept across plans (a plan turns it on or off)
   * @param ownerTimeout how long an owner node's answer is waited for
   */
  public Ingress(
      QueryPlan plan, LongSupplier clock, List<ActorRef<IngressWorker.Command>> workers, AtomicInteger[] pending,
      int maxPending, ServerMetrics metrics, Prefetch prefetch, OwnerDirectory owners, Duration ownerTimeout) {
    this.prefetch = prefetch;
    this.workers = new Workers(workers, pending, maxPending, metrics);
    this.parts = new StageChain.Parts(owners, new DirectOwnerLookups(owners, ownerTimeout, metrics, clock), prefetch,
        this.workers, metrics, clock);
    prefetch.enable(plan.prefetch());
    this.chain = StageChain.of(plan, parts);
    log.debug("query path: {}", chain);
  }

  /** The node is stopping: hits no longer prefetch (see {@link Prefetch#stop}). */
  public void stopPrefetching() {
    prefetch.stop();
  }

  /**
   * Makes {@code next} the plan of every query read from now on, and of the workers' next
   * messages; queries already in a worker finish with the profile they started with (its cache is
   * the same, only its upstreams may have changed).
   */
  public void replan(QueryPlan next) {
    prefetch.enable(next.prefetch());
    StageChain built = StageChain.of(next, parts);
    chain = built;
    log.debug("query path: {}", built);
    workers.tellAll(new IngressWorker.Replan(next.profiles(), next.serveStale()));
  }

  /** The plan queries are answered by now. */
  public QueryPlan plan() {
    return chain.plan();
  }

  /**
   * The one way into the query path, for every transport: takes a query as read (a datagram, or
   * a message framed from a stream), on the thread that read it. Its reply, if any, goes to
   * {@code reply}, on this thread for a hit or from a worker for a miss; a query that gets no
   * reply (dropped: denied, malformed beyond an answer, over a worker's budget on UDP) is told to
   * {@code reply} as {@link ReplyPath#drop()}.
   */
  public void offer(byte[] packet, InetSocketAddress client, Protocol protocol, ReplyPath reply) {
    chain.run(packet, client, protocol, reply);
  }

  /**
   * For a reader that has read a batch of queries ({@code packets[0..count)}, null ones skipped)
   * and is about to {@link #offer} them one by one: reads ahead what their cache look-ups will
   * read, so that with a large cache their misses of the CPU's caches overlap instead of each
   * waiting for the one before (at 1,000,000 answers a hit's look-up waits for about four reads
   * from memory). Answers nothing, changes nothing; returns a value to be discarded.
   */
  public int warm(byte[][] packets, int count) {
    return chain.warm(packets, count);
  }

  /**
   * Whether a stream connection from {@code client} may be kept: false for a client that access
   * control denies (counted as dropped), whose connection is closed before anything is read, so it
   * never holds a slot. A refused client stays, to be answered REFUSED per query.
   */
  public boolean admitsConnection(InetAddress client) {
    return !plan().access().deniesConnection(client);
  }

  /**
   * {@link #offer} for a stream transport (TCP, TLS, HTTPS): completes with the reply, or empty
   * when the query is dropped.
   */
  public CompletionStage<Optional<byte[]>> ask(byte[] packet, InetSocketAddress client, Protocol protocol) {
    StreamReply reply = new StreamReply();
    offer(packet, client, protocol, reply);
    return reply.future();
  }

  /** Misses accepted but not yet answered, over all workers. */
  public int pending() {
    return workers.pending();
  }
}

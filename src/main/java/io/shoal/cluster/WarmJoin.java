package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.PostStop;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.config.WarmJoinSettings;
import io.shoal.metrics.ClusterMetrics;
import io.shoal.profile.ProfileTable;
import io.shoal.wire.CacheKey;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warm join: when a member enters the owner ring (it joined, or came back after a restart), this
 * node walks its caches (its own and its near copies) and sends the member the answers the ring
 * now places on it, with the TTL they have left, so that it answers them as hits instead of
 * fetching them upstream again. And it takes in such answers from the other nodes. A node that
 * is told to stop hands over the same way, before it leaves: the answers it owns go to the members
 * that own them once it has left ({@link HandOver}), so its leaving costs no refetch either.
 *
 * <p>The answers go as Akka messages over Artery, a batch at a time: the next batch leaves when
 * the receiver has stored the last one (so a receiver whose LMDB shards are slow holds the sender
 * back, and Artery's send queue never fills), and not before the node's rate allows. One transfer
 * runs at a time, its walk on Akka's blocking dispatcher, never on a thread that answers DNS.
 *
 * <p>A join's transfer ends with an empty batch marked {@link Answers#last}. Until every other
 * member's has come (or its window ends), a joining node asks a key's previous owner for the
 * answer it holds before it asks the upstreams ({@link OwnerDirectory#previousOwnerOf}).
 *
 * <p>TTLs are sent as the time left and the age, not as clock times, so the nodes' clocks need not
 * agree; the receiver counts a second of transit against each, so a TTL never grows on the way.
 * Answers with less than {@code min_ttl_left} left, and remembered failures, are not sent. The
 * receiver keeps an answer it holds that was stored no earlier than the one it is sent.
 *
 * <p>A node that sent a joining member its answers releases them once the member holds them: it
 * removes them from its own caches (not from its near copies), unless it owns the key again by
 * then or has fetched the answer afresh since. Its caches are sized for the keys it owns, and the
 * copies would push those out. A node that hands over because it leaves releases nothing: it is
 * stopping.
 *
 * <p>This actor holds the messages and queues the transfers; {@link WarmJoinTransfer} is the
 * sending side (the walk, the batches, the release), {@link WarmJoinIntake} the receiving side.
 */
public final class WarmJoin extends AbstractBehavior<WarmJoin.Command> {

  /** Messages to a node's warm join. */
  public interface Command {}

  /** {@code member}'s answers are taken in by {@code receiver}: send it those the ring now places there. */
  record NewOwner(String member, ActorRef<Command> receiver) implements Command {}

  /**
   * Answers the receiving node now owns, from a node that held them; the sender sends the next
   * batch when {@code replyTo} has the {@link Taken}.
   *
   * @param entries {@code count} entries, each: key length (u16), key, age and time left in ms
   *     (i64 each), answer length (i32), the answer as {@link CachedAnswer#encode} writes it
   * @param last the sender's transfer to this node has ended with the batches before this one
   *     (then {@code count} is 0); a node of an earlier version never says so
   */
  public static final class Answers implements Command, CborSerializable {
    public final byte[] entries;
    public final int count;
    public final ActorRef<Taken> replyTo;
    public final boolean last;

    @JsonCreator
    public Answers(
        @JsonProperty("entries") byte[] entries, @JsonProperty("count") int count,
        @JsonProperty("replyTo") ActorRef<Taken> replyTo, @JsonProperty("last") boolean last) {
      this.entries = entries;
      this.count = count;
      this.replyTo = replyTo;
      this.last = last;
    }
  }

  /**
   * A batch was stored: {@code stored} answers kept; {@code held} of the batch's answers the node
   * holds now (those stored, and those it held as fresh already); {@code accepting} false when the
   * node takes none (warm join off). A node of an earlier version sends no {@code held}: 0.
   */
  public static final class Taken implements CborSerializable {
    public final boolean accepting;
    public final int stored;
    public final int held;

    @JsonCreator
    public Taken(
        @JsonProperty("accepting") boolean accepting, @JsonProperty("stored") int stored,
        @JsonProperty("held") int held) {
      this.accepting = accepting;
      this.stored = stored;
      this.held = held;
    }
  }

  /**
   * This node is leaving (it was told to stop): send the answers it owns to the members that own
   * them once it has left, then reply. Ahead of any transfer still waiting.
   */
  record HandOver(ActorRef<akka.Done> replyTo) implements Command {}

  /** Look again whether the transfers that wait for the node's flush catch-up may start. */
  private enum CaughtUp implements Command { CHECK }

  /** How often a transfer waiting for the flush catch-up looks again. */
  private static final Duration CATCH_UP_CHECK = Duration.ofMillis(200);

  private record TransferEnded(
      String to, long sent, long released, long millis, String failure, ActorRef<akka.Done> replyTo)
      implements Command {}

  /** The receiver of this name lives beside each node's owner endpoint. */
  static final String NAME = "warm-join";

  private static final Logger log = LoggerFactory.getLogger(WarmJoin.class);

  private final List<AnswerCache> caches;
  private final OwnerDirectory directory;
  private final LongSupplier clock;
  private final WarmJoinSettings settings;
  private final ClusterMetrics metrics;
  private final NodeStatus status;
  private final WarmJoinIntake intake;
  private final Executor walks;
  private final akka.actor.typed.Scheduler scheduler;
  private final java.util.Deque<Job> waiting = new ArrayDeque<>();
  /** Where each member takes answers in, as the latest {@link NewOwner} for it said. */
  private final Map<String, ActorRef<Command>> receivers = new HashMap<>();
  private final AtomicBoolean stopped = new AtomicBoolean();
  /** Whether a {@link CaughtUp#CHECK} is on its way. */
  private boolean checkScheduled;
  /** The transfer under way, or null. */
  private WarmJoinTransfer walking;

  /**
   * @param caches this node's caches, near copies included: where answers are sent from
   * @param profiles which cache a received answer goes to (the profile of its name)
   * @param clock epoch milliseconds
   * @param status the node's readiness: no answer leaves its caches while its flush catch-up is
   *     pending (they may hold answers the cluster flushed while it was away)
   */
  public static Behavior<Command> create(
      List<AnswerCache> caches, OwnerDirectory directory, Supplier<ProfileTable> profiles, LongSupplier clock,
      WarmJoinSettings settings, ClusterMetrics metrics, NodeStatus status) {
    return Behaviors.setup(ctx -> new WarmJoin(ctx, caches, directory, profiles, clock, settings, metrics, status));
  }

  private WarmJoin(
      ActorContext<Command> context, List<AnswerCache> caches, OwnerDirectory directory,
      Supplier<ProfileTable> profiles, LongSupplier clock, WarmJoinSettings settings, ClusterMetrics metrics,
      NodeStatus status) {
    super(context);
    this.status = status;
    this.caches = List.copyOf(caches);
    this.directory = directory;
    this.clock = clock;
    this.settings = settings;
    this.metrics = metrics;
    this.intake = new WarmJoinIntake(directory, profiles, clock, metrics);
    this.walks = context.getSystem().dispatchers().lookup(DispatcherSelector.blocking());
    this.scheduler = context.getSystem().scheduler();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(NewOwner.class, this::onNewOwner)
        .onMessage(HandOver.class, this::onHandOver)
        .onMessage(TransferEnded.class, this::onTransferEnded)
        .onMessage(Answers.class, this::onAnswers)
        .onMessageEquals(CaughtUp.CHECK, () -> {
          checkScheduled = false;
          startNext();
          return Behaviors.same();
        })
        .onSignal(PostStop.class, s -> {
          stopped.set(true);
          return Behaviors.same();
        })
        .build();
  }

  /**
   * A transfer to do: where each key goes ({@code destination}: a member, or null to keep it),
   * described as {@code to} in the log; {@code joiner}: the one member a join's transfer goes to,
   * which is told when it ended and whose stored answers this node releases from its own caches,
   * or null for a hand-over (which releases nothing); {@code replyTo} (or null) is told when it ended.
   */
  private record Job(
      String to, Function<CacheKey, String> destination, String joiner, ActorRef<akka.Done> replyTo) {}

  private Behavior<Command> onNewOwner(NewOwner owner) {
    receivers.put(owner.member(), owner.receiver());
    if (!settings.enabled()) {
      return Behaviors.same();
    }
    String member = owner.member();
    waiting.addLast(new Job(member, key -> directory.ownedBy(key, member) ? member : null, member, null));
    startNext();
    return Behaviors.same();
  }

  private Behavior<Command> onHandOver(HandOver handOver) {
    if (!settings.enabled() || receivers.isEmpty() || !status.cachesServable()) {
      // Off, or no other member has been seen: nobody to hand over to, and no walk for nothing.
      // Or the node stops before it caught up on the cluster's flushes: what it holds may be flushed.
      handOver.replyTo().tell(akka.Done.getInstance());
      return Behaviors.same();
    }
    // Joiners waiting for their transfer, or getting it, lose nothing: this node's answers go to
    // their owners now, and a long transfer must not eat the hand-over's time.
    waiting.clear();
    if (walking != null) {
      walking.cancelled = true;
    }
    waiting.addFirst(new Job("the members that own this node's names once it has left", directory::successorOf,
        null, handOver.replyTo()));
    startNext();
    return Behaviors.same();
  }

  private void startNext() {
    if (walking != null || waiting.isEmpty()) {
      return;
    }
    if (!status.cachesServable()) {
      // Back from being away and not caught up on the flushes made meanwhile: sent now, a flushed
      // answer would be stored again by a node that applied the flush long ago.
      if (!checkScheduled) {
        checkScheduled = true;
        getContext().scheduleOnce(CATCH_UP_CHECK, getContext().getSelf(), CaughtUp.CHECK);
      }
      return;
    }
    Job next = waiting.poll();
    long start = System.nanoTime();
    WarmJoinTransfer transfer = new WarmJoinTransfer(caches, directory, clock, settings, metrics, scheduler, stopped,
        next.destination(), next.joiner(), Map.copyOf(receivers));
    walking = transfer;
    getContext().pipeToSelf(CompletableFuture.supplyAsync(transfer::run, walks), (sent, failure) ->
        new TransferEnded(next.to(), failure == null ? sent : transfer.sent, transfer.released,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
            failure == null ? null : String.valueOf(failure.getCause() != null ? failure.getCause() : failure),
            next.replyTo()));
  }

  private Behavior<Command> onTransferEnded(TransferEnded ended) {
    walking = null;
    if (ended.failure() == null && ended.sent() == 0) {
      log.debug("warm join: no answer held here goes to {}", ended.to());
    } else if (ended.failure() == null) {
      log.info("warm join: sent {} answer(s) to {} in {} ms, released {} of them here", ended.sent(), ended.to(),
          ended.millis(), ended.released());
    } else {
      log.info("warm join to {} ended after {} answer(s), {} released here: {}", ended.to(), ended.sent(),
          ended.released(), ended.failure());
    }
    if (ended.replyTo() != null) {
      ended.replyTo().tell(akka.Done.getInstance());
    }
    startNext();
    return Behaviors.same();
  }

  /** Stores the answers another node sent (see {@link WarmJoinIntake}), unless warm join is off here. */
  private Behavior<Command> onAnswers(Answers batch) {
    if (!settings.enabled()) {
      batch.replyTo.tell(new Taken(false, 0, 0));
      return Behaviors.same();
    }
    intake.take(batch);
    return Behaviors.same();
  }
}

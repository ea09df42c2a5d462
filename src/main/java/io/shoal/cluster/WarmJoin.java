package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.PostStop;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.AskPattern;
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
import io.shoal.wire.Rcode;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
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

  /** Time in transit counted against each received answer's TTL. */
  static final long TRANSIT_MILLIS = 1000;

  /** How long a batch may take to be stored on the other side before the transfer gives up. */
  private static final Duration BATCH_TIMEOUT = Duration.ofSeconds(3);

  /** Bytes of answers per message at most, well within Artery's maximum frame (256 KiB by default). */
  private static final int MAX_BATCH_BYTES = 128 * 1024;

  private static final Logger log = LoggerFactory.getLogger(WarmJoin.class);

  private final List<AnswerCache> caches;
  private final OwnerDirectory directory;
  private final Supplier<ProfileTable> profiles;
  private final LongSupplier clock;
  private final WarmJoinSettings settings;
  private final ClusterMetrics metrics;
  private final NodeStatus status;
  private final Executor walks;
  private final akka.actor.typed.Scheduler scheduler;
  private final java.util.Deque<Job> waiting = new ArrayDeque<>();
  /** Where each member takes answers in, as the latest {@link NewOwner} for it said. */
  private final Map<String, ActorRef<Command>> receivers = new HashMap<>();
  private final AtomicBoolean stopped = new AtomicBoolean();
  /** Whether a {@link CaughtUp#CHECK} is on its way. */
  private boolean checkScheduled;
  /** The transfer under way, or null. */
  private Transfer walking;

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
    this.profiles = profiles;
    this.clock = clock;
    this.settings = settings;
    this.metrics = metrics;
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
          return this;
        })
        .onSignal(PostStop.class, s -> {
          stopped.set(true);
          return this;
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
      return this;
    }
    String member = owner.member();
    waiting.addLast(new Job(member, key -> directory.ownedBy(key, member) ? member : null, member, null));
    startNext();
    return this;
  }

  private Behavior<Command> onHandOver(HandOver handOver) {
    if (!settings.enabled() || receivers.isEmpty() || !status.cachesServable()) {
      // Off, or no other member has been seen: nobody to hand over to, and no walk for nothing.
      // Or the node stops before it caught up on the cluster's flushes: what it holds may be flushed.
      handOver.replyTo().tell(akka.Done.getInstance());
      return this;
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
    return this;
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
    Transfer transfer = new Transfer(next.destination(), next.joiner(), Map.copyOf(receivers));
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
    return this;
  }

  /**
   * One transfer: walks the caches on the blocking dispatcher and sends each answer to the
   * member its key goes to, batch by batch, at the node's rate over all members.
   */
  private final class Transfer {
    private final Function<CacheKey, String> destination;
    /**
     * The member a join's transfer goes to: told when it ended, and the answers it holds leave this
     * node's own caches; null for a hand-over.
     */
    private final String joiner;
    private final Map<String, ActorRef<Command>> receivers;
    private final Map<String, Batch> batches = new HashMap<>();
    /** Members that take no answers (warm join off there, or no acknowledgement): skipped from then on. */
    private final Map<String, String> declined = new HashMap<>();
    private long startNanos;
    /** Answers the receivers have acknowledged; read by the actor once the walk ended. */
    volatile long sent;
    /** Of those, answers removed from this node's own caches; read by the actor once the walk ended. */
    volatile long released;
    /** Set by the actor: the node is stopping, and the hand-over goes first. */
    volatile boolean cancelled;

    Transfer(Function<CacheKey, String> destination, String joiner, Map<String, ActorRef<Command>> receivers) {
      this.destination = destination;
      this.joiner = joiner;
      this.receivers = receivers;
    }

    long run() {
      startNanos = System.nanoTime();
      long minLeft = settings.minTtlLeft().toMillis();
      for (AnswerCache cache : caches) {
        cache.entries((key, answer) -> {
          if (stopped.get() || cancelled) {
            throw new Declined(cancelled ? "this node is stopping" : "this node's membership stopped");
          }
          if ((answer.wire()[3] & 0x0F) == Rcode.SERVFAIL || answer.expiredAt(clock.getAsLong() + minLeft)) {
            return;
          }
          String to = destination.apply(key);
          if (to == null || declined.containsKey(to) || !receivers.containsKey(to)) {
            return;
          }
          Batch batch = batches.computeIfAbsent(to, m -> new Batch());
          batch.add(key, answer, cache);
          if (batch.entries.size() >= settings.batch() || batch.bytes >= MAX_BATCH_BYTES) {
            send(to, batch);
          }
        });
      }
      batches.forEach((to, batch) -> {
        if (!batch.entries.isEmpty() && !declined.containsKey(to)) {
          send(to, batch);
        }
      });
      if (sent == 0 && !declined.isEmpty()) {
        throw new Declined(String.join("; ", declined.values()));
      }
      if (joiner != null && receivers.containsKey(joiner) && !declined.containsKey(joiner)) {
        ended(joiner);
      }
      return sent;
    }

    /**
     * Tells {@code member} that this transfer to it has ended, so it stops asking this node for what
     * it holds (see {@link OwnerDirectory#previousOwnerOf}); a member that does not hear it stops
     * when its window ends.
     */
    private void ended(String member) {
      try {
        AskPattern.<Command, Taken>ask(receivers.get(member), replyTo -> new Answers(new byte[0], 0, replyTo, true),
                BATCH_TIMEOUT, scheduler)
            .toCompletableFuture().get(BATCH_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        log.debug("warm join: {} did not acknowledge the end of its transfer: {}", member, e.toString());
      }
    }

    /** Sends {@code batch} to {@code to} when the rate allows, and waits until it is stored there. */
    private void send(String to, Batch batch) {
      long due = startNanos + sent * 1_000_000_000L / settings.maxAnswersPerSecond();
      for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
        if (stopped.get() || cancelled) {
          throw new Declined(cancelled ? "this node is stopping" : "this node's membership stopped");
        }
        LockSupport.parkNanos(Math.min(wait, 100_000_000L));
      }
      byte[] entries = batch.encode(clock.getAsLong(), settings.minTtlLeft().toMillis());
      batch.clear();
      if (entries == null) {
        return;
      }
      List<Entry> encoded = batch.lastSent;
      int count = encoded.size();
      Taken taken;
      try {
        taken = AskPattern.<Command, Taken>ask(receivers.get(to), replyTo -> new Answers(entries, count, replyTo, false),
                BATCH_TIMEOUT, scheduler)
            .toCompletableFuture().get(BATCH_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
      } catch (Exception e) {
        declined.put(to, to + ": no acknowledgement within " + BATCH_TIMEOUT.toSeconds() + " s (" + e + ")");
        return;
      }
      if (!taken.accepting) {
        declined.put(to, to + " takes no answers (its warm_join is off)");
        return;
      }
      sent += count;
      metrics.warmJoinSent(count);
      if (joiner != null && taken.held == count) {
        release(encoded);
      }
    }

    /**
     * Removes answers a joining member holds now from the caches they were read from, the near
     * cache aside, each unless this node owns its key now or holds one stored since; waits (up to
     * the batch timeout) to count them.
     */
    private void release(List<Entry> stored) {
      List<CompletableFuture<Boolean>> removals = new ArrayList<>();
      for (Entry e : stored) {
        if (!directory.isNearCache(e.from()) && !directory.ownedHere(e.key())) {
          removals.add(e.from().removeIfStoredBy(e.key(), e.answer().storedAtMillis()).toCompletableFuture());
        }
      }
      try {
        CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new))
            .get(BATCH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        // Counted below as far as they went: an answer not removed costs room, never an answer.
      }
      int n = 0;
      for (CompletableFuture<Boolean> r : removals) {
        if (r.isDone() && !r.isCompletedExceptionally() && r.getNow(false)) {
          n++;
        }
      }
      released += n;
      metrics.warmJoinReleased(n);
    }
  }

  /** An answer read from {@code from}, to be sent. */
  private record Entry(CacheKey key, CachedAnswer answer, AnswerCache from) {}

  /** Answers waiting to go to one member. */
  private static final class Batch {
    final List<Entry> entries = new ArrayList<>();
    int bytes;
    /** Entries {@link #encode} wrote. */
    List<Entry> lastSent = List.of();

    void add(CacheKey key, CachedAnswer answer, AnswerCache from) {
      entries.add(new Entry(key, answer, from));
      bytes += key.bytes().length + answer.encodedSize() + 22;
    }

    void clear() {
      entries.clear();
      bytes = 0;
    }

    /**
     * The entries as {@link Answers} carries them, their age and time left counted at
     * {@code now}; those with less than {@code minLeft} left by now are left out (they aged while
     * the batch waited for the rate). Null when none is left.
     */
    byte[] encode(long now, long minLeft) {
      ByteBuffer out = ByteBuffer.allocate(bytes);
      List<Entry> written = new ArrayList<>(entries.size());
      for (Entry e : entries) {
        CachedAnswer a = e.answer();
        long left = a.expiresAtMillis() - now;
        if (left < minLeft) {
          continue;
        }
        byte[] key = e.key().bytes();
        out.putShort((short) key.length).put(key);
        out.putLong(Math.max(0, now - a.storedAtMillis())).putLong(left);
        out.putInt(a.encodedSize());
        a.encode(out);
        written.add(e);
      }
      lastSent = written;
      if (written.isEmpty()) {
        return null;
      }
      byte[] entries = new byte[out.position()];
      out.flip().get(entries);
      return entries;
    }
  }

  /** Ends a transfer early, saying why. */
  private static final class Declined extends RuntimeException {
    Declined(String why) {
      super(why, null, false, false);
    }

    @Override
    public String toString() {
      return getMessage();
    }
  }

  /**
   * Stores the answers another node sent, each in the cache of its name's profile, unless that
   * cache holds one stored no earlier; replies once the fills are done.
   */
  private Behavior<Command> onAnswers(Answers batch) {
    if (!settings.enabled()) {
      batch.replyTo.tell(new Taken(false, 0, 0));
      return this;
    }
    long now = clock.getAsLong();
    ProfileTable table = profiles.get();
    List<CompletableFuture<Boolean>> fills = new ArrayList<>(batch.count);
    int kept = 0;
    try {
      ByteBuffer in = ByteBuffer.wrap(batch.entries);
      for (int i = 0; i < batch.count; i++) {
        byte[] keyBytes = new byte[in.getShort() & 0xFFFF];
        in.get(keyBytes);
        long age = in.getLong();
        long left = in.getLong();
        int length = in.getInt();
        ByteBuffer encoded = in.slice().limit(length);
        in.position(in.position() + length);
        CachedAnswer sent = CachedAnswer.decode(encoded);
        CacheKey key = CacheKey.ofBytes(keyBytes);
        long storedAt = now - age - TRANSIT_MILLIS;
        long expiresAt = now + left - TRANSIT_MILLIS;
        if (expiresAt <= now) {
          continue;
        }
        AnswerCache cache = table.match(key).cache();
        CachedAnswer held = cache.get(key, now);
        if (held != null && held.storedAtMillis() >= storedAt) {
          kept++;
          continue; // this node's own is as fresh or fresher
        }
        fills.add(cache.fill(key, new CachedAnswer(
            sent.wire(), sent.ttlOffsets(), sent.optStart(), sent.optEnd(), storedAt, expiresAt)).toCompletableFuture());
      }
    } catch (BufferUnderflowException | IndexOutOfBoundsException | IllegalArgumentException e) {
      log.warn("warm join: a batch from {} does not read ({}); the answers read before it are kept",
          batch.replyTo.path().address(), e.toString());
    }
    if (batch.last) {
      String from = batch.replyTo.path().address().toString();
      if (directory.transferIn(from)) {
        log.info("warm join: every member's answers are in (the last from {}); misses go upstream again, not to the"
            + " previous owners", from);
      }
    }
    ActorRef<Taken> replyTo = batch.replyTo;
    int heldAlready = kept;
    CompletableFuture.allOf(fills.toArray(CompletableFuture[]::new)).handle((v, failure) -> {
      int stored = 0;
      for (CompletableFuture<Boolean> f : fills) {
        if (!f.isCompletedExceptionally() && Boolean.TRUE.equals(f.getNow(false))) {
          stored++;
        }
      }
      metrics.warmJoinReceived(stored);
      replyTo.tell(new Taken(true, stored, stored + heldAlready));
      return null;
    });
    return this;
  }
}

package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Scheduler;
import akka.actor.typed.javadsl.AskPattern;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.config.WarmJoinSettings;
import io.shoal.metrics.ClusterMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.Rcode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending side of a {@link WarmJoin}: one transfer, which walks this node's caches on the
 * blocking dispatcher and sends each answer to the member its key goes to, batch by batch, at the
 * node's rate over all members. The next batch to a member leaves when it has stored the last one.
 * Once a joining member holds a batch, its answers are released from this node's own caches.
 */
final class WarmJoinTransfer {

  /** How long a batch may take to be stored on the other side before the transfer gives up. */
  private static final Duration BATCH_TIMEOUT = Duration.ofSeconds(3);

  /** Bytes of answers per message at most, well within Artery's maximum frame (256 KiB by default). */
  private static final int MAX_BATCH_BYTES = 128 * 1024;

  private static final Logger log = LoggerFactory.getLogger(WarmJoin.class);

  private final List<AnswerCache> caches;
  private final OwnerDirectory directory;
  private final LongSupplier clock;
  private final WarmJoinSettings settings;
  private final ClusterMetrics metrics;
  private final Scheduler scheduler;
  /** Set by the actor when it stopped: the walk ends. */
  private final AtomicBoolean stopped;
  private final Function<CacheKey, String> destination;
  /**
   * The member a join's transfer goes to: told when it ended, and the answers it holds leave this
   * node's own caches; null for a hand-over.
   */
  private final String joiner;
  private final Map<String, ActorRef<WarmJoin.Command>> receivers;
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

  /**
   * @param caches this node's caches, near copies included: where answers are sent from
   * @param clock epoch milliseconds
   * @param stopped set when the node's warm join stopped
   * @param destination where each key goes: a member, or null to keep it
   * @param joiner the one member a join's transfer goes to, or null for a hand-over
   * @param receivers where each member takes answers in
   */
  WarmJoinTransfer(
      List<AnswerCache> caches, OwnerDirectory directory, LongSupplier clock, WarmJoinSettings settings,
      ClusterMetrics metrics, Scheduler scheduler, AtomicBoolean stopped, Function<CacheKey, String> destination,
      String joiner, Map<String, ActorRef<WarmJoin.Command>> receivers) {
    this.caches = caches;
    this.directory = directory;
    this.clock = clock;
    this.settings = settings;
    this.metrics = metrics;
    this.scheduler = scheduler;
    this.stopped = stopped;
    this.destination = destination;
    this.joiner = joiner;
    this.receivers = receivers;
  }

  /** Walks the caches and sends what goes elsewhere; returns how many answers the receivers acknowledged. */
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
      AskPattern.<WarmJoin.Command, WarmJoin.Taken>ask(receivers.get(member),
              replyTo -> new WarmJoin.Answers(new byte[0], 0, replyTo, true), BATCH_TIMEOUT, scheduler)
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
    WarmJoin.Taken taken;
    try {
      taken = AskPattern.<WarmJoin.Command, WarmJoin.Taken>ask(receivers.get(to),
              replyTo -> new WarmJoin.Answers(entries, count, replyTo, false), BATCH_TIMEOUT, scheduler)
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
     * The entries as {@link WarmJoin.Answers} carries them, their age and time left counted at
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
}

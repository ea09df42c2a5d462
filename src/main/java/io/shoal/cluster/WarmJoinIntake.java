package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.ClusterMetrics;
import io.shoal.profile.ProfileTable;
import io.shoal.wire.CacheKey;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving side of a {@link WarmJoin}: stores the answers another node sent, each in the
 * cache of its name's profile, unless that cache holds one stored no earlier, with a second of
 * transit counted against its TTL; and notes when a sender's transfer to this node has ended.
 */
final class WarmJoinIntake {

  /** Time in transit counted against each received answer's TTL. */
  private static final long TRANSIT_MILLIS = 1000;

  private static final Logger log = LoggerFactory.getLogger(WarmJoin.class);

  private final OwnerDirectory directory;
  private final Supplier<ProfileTable> profiles;
  private final LongSupplier clock;
  private final ClusterMetrics metrics;

  /**
   * @param profiles which cache a received answer goes to (the profile of its name)
   * @param clock epoch milliseconds
   */
  WarmJoinIntake(
      OwnerDirectory directory, Supplier<ProfileTable> profiles, LongSupplier clock, ClusterMetrics metrics) {
    this.directory = directory;
    this.profiles = profiles;
    this.clock = clock;
    this.metrics = metrics;
  }

  /** Stores {@code batch}'s answers; replies to its sender once the fills are done. */
  void take(WarmJoin.Answers batch) {
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
    ActorRef<WarmJoin.Taken> replyTo = batch.replyTo;
    int heldAlready = kept;
    CompletableFuture.allOf(fills.toArray(CompletableFuture[]::new)).handle((v, failure) -> {
      int stored = 0;
      for (CompletableFuture<Boolean> f : fills) {
        if (!f.isCompletedExceptionally() && Boolean.TRUE.equals(f.getNow(false))) {
          stored++;
        }
      }
      metrics.warmJoinReceived(stored);
      replyTo.tell(new WarmJoin.Taken(true, stored, stored + heldAlready));
      return null;
    });
  }
}

package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.ddata.Key;
import akka.cluster.ddata.LWWMap;
import akka.cluster.ddata.LWWMapKey;
import akka.cluster.ddata.SelfUniqueAddress;
import akka.cluster.ddata.typed.javadsl.DistributedData;
import akka.cluster.ddata.typed.javadsl.Replicator;
import akka.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.SelfUp;
import akka.cluster.typed.Subscribe;
import io.shoal.cache.AnswerCache;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's replicated record of flushes (Akka Distributed Data): "name/type was flushed at
 * T" for every flush of the last {@code retention}. Every node applies each record to its caches
 * against the answers' stored-at times, when the record changes and when the node joins, so a
 * node that was down or cut off when a flush was issued drops its pre-flush copies as soon as it
 * is back: a starting node before it reports ready, a node that serves already as it joins.
 */
public final class FlushRecord extends AbstractBehavior<FlushRecord.Command> {

  /** Messages to the flush record. */
  public interface Command {}

  /** Record a flush of {@code name} ({@code qtype} 0: every type) made at {@code atMillis}. */
  public record Record(String name, int qtype, long atMillis, ActorRef<Recorded> replyTo) implements Command {}

  /** The record was written: on every reachable node ({@code everywhere}), or locally and spreading. */
  public record Recorded(boolean everywhere) {}

  private record Changed(Replicator.SubscribeResponse<LWWMap<String, Long>> response) implements Command {}

  private record Written(Replicator.UpdateResponse<LWWMap<String, Long>> response, ActorRef<Recorded> replyTo)
      implements Command {}

  private record Joined(SelfUp up) implements Command {}

  private record ReadOnJoin(Replicator.GetResponse<LWWMap<String, Long>> response) implements Command {}

  private enum AppliedOnJoin implements Command { INSTANCE }

  private enum JoinWaitOver implements Command { INSTANCE }

  /** Read the record from a majority again: the last read on joining failed. */
  private enum ReadAgain implements Command { INSTANCE }

  /** How long after a failed read on joining the record is read again. */
  private static final Duration READ_RETRY = Duration.ofSeconds(1);

  private static final Logger log = LoggerFactory.getLogger(FlushRecord.class);
  private static final Key<LWWMap<String, Long>> KEY = LWWMapKey.create("shoal-flushes");
  private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(3);

  private final ReplicatorMessageAdapter<Command, LWWMap<String, Long>> replicator;
  private final SelfUniqueAddress self;
  private final List<AnswerCache> caches;
  private final Consumer<String> recursionFlush;
  private final NodeStatus status;
  private final Duration retention;
  /** What this incarnation has applied: record key to flush time. */
  private final Map<String, Long> applied = new HashMap<>();
  private boolean joined;

  /**
   * @param recursionFlush forgets what the recursion learnt at or below a flushed name
   * @param retention how long a record is kept: the longest an answer may live (max_ttl), after
   *     which no cache can still hold a copy from before the flush
   * @param joinWait how long a starting node stays not ready while it waits to join and catch up
   *     on flushes; after that it reports ready on its own (zero: ready at once)
   */
  public static Behavior<Command> create(List<AnswerCache> caches, Consumer<String> recursionFlush, NodeStatus status,
      Duration retention, Duration joinWait) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      if (!joinWait.isZero()) {
        status.flushesPending(true);
        timers.startSingleTimer(JoinWaitOver.INSTANCE, joinWait);
      }
      return DistributedData.withReplicatorMessageAdapter(
          (ReplicatorMessageAdapter<Command, LWWMap<String, Long>> r) -> new FlushRecord(ctx, r, caches, recursionFlush,
              status, retention, timers));
    }));
  }

  private final TimerScheduler<Command> timers;

  private FlushRecord(
      ActorContext<Command> context, ReplicatorMessageAdapter<Command, LWWMap<String, Long>> replicator,
      List<AnswerCache> caches, Consumer<String> recursionFlush, NodeStatus status, Duration retention,
      TimerScheduler<Command> timers) {
    super(context);
    this.timers = timers;
    this.replicator = replicator;
    this.self = DistributedData.get(context.getSystem()).selfUniqueAddress();
    this.caches = caches;
    this.recursionFlush = recursionFlush;
    this.status = status;
    this.retention = retention;
    replicator.subscribe(KEY, Changed::new);
    Cluster.get(context.getSystem()).subscriptions().tell(
        Subscribe.create(context.messageAdapter(SelfUp.class, Joined::new), SelfUp.class));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Record.class, this::onRecord)
        .onMessage(Written.class, this::onWritten)
        .onMessage(Changed.class, this::onChanged)
        .onMessage(Joined.class, this::onJoined)
        .onMessage(ReadOnJoin.class, this::onReadOnJoin)
        .onMessageEquals(AppliedOnJoin.INSTANCE, this::onAppliedOnJoin)
        .onMessageEquals(JoinWaitOver.INSTANCE, this::onJoinWaitOver)
        .onMessageEquals(ReadAgain.INSTANCE, this::readOnJoin)
        .build();
  }

  private static String recordKey(String name, int qtype) {
    return name + "/" + qtype;
  }

  private Behavior<Command> onRecord(Record r) {
    long oldest = r.atMillis() - retention.toMillis();
    replicator.askUpdate(
        askReplyTo -> new Replicator.Update<>(KEY, LWWMap.create(), new Replicator.WriteAll(WRITE_TIMEOUT), askReplyTo,
            map -> {
              // Records older than any answer can live are dropped as new ones are written.
              LWWMap<String, Long> pruned = map;
              for (Map.Entry<String, Long> e : map.getEntries().entrySet()) {
                if (e.getValue() < oldest) {
                  pruned = pruned.remove(self, e.getKey());
                }
              }
              return pruned.put(self, recordKey(r.name(), r.qtype()), r.atMillis());
            }),
        response -> new Written(response, r.replyTo()));
    return Behaviors.same();
  }

  private Behavior<Command> onWritten(Written w) {
    boolean everywhere = w.response() instanceof Replicator.UpdateSuccess;
    if (!everywhere) {
      log.warn("flush recorded on this node only so far ({}); gossip spreads it to the others",
          w.response().getClass().getSimpleName());
    }
    w.replyTo().tell(new Recorded(everywhere));
    return Behaviors.same();
  }

  private Behavior<Command> onChanged(Changed c) {
    if (c.response() instanceof Replicator.Changed<LWWMap<String, Long>> changed) {
      apply(changed.get(KEY));
    }
    return Behaviors.same();
  }

  private Behavior<Command> onJoined(Joined j) {
    // A starting node is held out of service until the flushes it missed are applied (create).
    // A node that serves already (after join_wait, or rejoining after it was downed) stays in
    // service meanwhile: it has been answering from these caches all along, and the catch-up
    // takes milliseconds, less than dropping out of the Service and back would.
    joined = true;
    return readOnJoin();
  }

  private Behavior<Command> readOnJoin() {
    replicator.askGet(
        askReplyTo -> new Replicator.Get<>(KEY, new Replicator.ReadMajority(WRITE_TIMEOUT), askReplyTo),
        ReadOnJoin::new);
    return Behaviors.same();
  }

  private Behavior<Command> onReadOnJoin(ReadOnJoin r) {
    CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
    if (r.response() instanceof Replicator.GetSuccess<LWWMap<String, Long>> found) {
      done = apply(found.get(KEY));
    } else if (r.response() instanceof Replicator.GetFailure) {
      // What has arrived by gossip may not be all: a node that stayed held back until a majority
      // answers serves no flushed name, where one that gave up would (a busy or partitioned
      // cluster answers late, not never). A node that serves already just catches up later.
      log.warn("could not read the flush record from a majority on joining; reading again in {} ms",
          READ_RETRY.toMillis());
      timers.startSingleTimer(ReadAgain.INSTANCE, READ_RETRY);
      return Behaviors.same();
    }
    getContext().pipeToSelf(done, (ok, failure) -> AppliedOnJoin.INSTANCE);
    return Behaviors.same();
  }

  private Behavior<Command> onAppliedOnJoin() {
    status.flushesPending(false);
    log.info("joined the cluster; {} flush record(s) applied", applied.size());
    return Behaviors.same();
  }

  private Behavior<Command> onJoinWaitOver() {
    if (!joined) {
      status.flushesPending(false);
      log.info("no cluster joined yet: ready as an independent node; the cluster's flushes are applied on joining");
    }
    return Behaviors.same();
  }

  /** Applies the records not applied yet; completes when every cache has removed what they flush. */
  private CompletableFuture<Void> apply(LWWMap<String, Long> record) {
    List<CompletableFuture<Integer>> removals = new ArrayList<>();
    for (Map.Entry<String, Long> e : record.getEntries().entrySet()) {
      Long before = applied.get(e.getKey());
      long at = e.getValue();
      if (before != null && before >= at) {
        continue;
      }
      applied.put(e.getKey(), at);
      int slash = e.getKey().lastIndexOf('/');
      String name = e.getKey().substring(0, slash);
      int qtype = Integer.parseInt(e.getKey().substring(slash + 1));
      // Zone cuts and kept records have no store time to compare: they go whatever their age (a
      // record replayed on joining costs a walk from the cut above, nothing served stale).
      try {
        recursionFlush.accept(name);
      } catch (RuntimeException ex) {
        log.warn("flush of {} from the recursion state failed", name, ex);
      }
      for (AnswerCache cache : caches) {
        CompletableFuture<Integer> removal = cache.flushNameStoredBefore(name, qtype, at).toCompletableFuture();
        removal.thenAccept(n -> {
          if (n > 0) {
            log.info("flushed {} entr{} for {} from cache {}", n, n == 1 ? "y" : "ies", name, cache.name());
          }
        });
        removals.add(removal);
      }
    }
    return CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new));
  }
}

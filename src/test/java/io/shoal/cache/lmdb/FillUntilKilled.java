package io.shoal.cache.lmdb;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.ConfigFactory;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.CacheSettings;
import io.shoal.metrics.CacheMetrics;
import io.shoal.testing.StoredAnswers;
import io.shoal.wire.CacheKey;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.xbill.DNS.Type;

/**
 * The child process of {@link CrashDurabilitySpec}: opens an LMDB cache the way a node does,
 * checks that every answer acknowledged by earlier runs is a hit, then fills new answers
 * write-through and prints {@code ACK <name>} only once a fill's commit completed, until the
 * parent kills it.
 *
 * <p>Arguments: cache path, sync mode, run number, file of acknowledged names (one a line), and
 * optionally how many fills to send at most. Lines on stdout: {@code VERIFIED <n>}, {@code MISSING <name>},
 * {@code READY}, {@code ACK <name>}, {@code DONE} (no more fills; the cache stays open until the
 * run's time is up), {@code FAILED <why>}.
 */
public final class FillUntilKilled {
  /** Fills in flight at once: enough for every shard to group-commit several per transaction. */
  private static final int IN_FLIGHT = 128;
  /** Bounds on a run the parent forgot to kill; a run that reaches them idles until its time is up. */
  private static final int MAX_FILLS = 100_000;
  private static final long MAX_RUN_NANOS = TimeUnit.SECONDS.toNanos(60);
  static final int SHARDS = 4;
  static final long TTL_SECONDS = 86_400;

  private FillUntilKilled() {}

  /** The answer stored for {@code name}: its content follows from the name, so a reader can rebuild it. */
  static CachedAnswer answerFor(String name, long storedAt) {
    return StoredAnswers.answer(name, Type.A, 1 + Math.floorMod(name.hashCode(), 4), TTL_SECONDS, storedAt);
  }

  static CacheKey keyFor(String name) {
    return StoredAnswers.key(name, Type.A);
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false);
    Path path = Path.of(args[0]);
    SyncMode sync = SyncMode.valueOf(args[1]);
    int run = Integer.parseInt(args[2]);
    List<String> acknowledged = Files.readAllLines(Path.of(args[3]));
    int maxFills = args.length > 4 ? Integer.parseInt(args[4]) : MAX_FILLS;

    CacheSettings settings = StoredAnswers.settings("crash", path, SHARDS, sync);
    CompletableFuture<LmdbAnswerCache> opened = new CompletableFuture<>();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.setup(ctx -> {
      try {
        opened.complete(LmdbAnswerCache.open(ctx, settings, new CacheMetrics("crash", "lmdb"), CacheShard.Opener.FILES));
      } catch (RuntimeException e) {
        opened.completeExceptionally(e);
      }
      return Behaviors.empty();
    }), "fill-until-killed", ConfigFactory.load());
    LmdbAnswerCache cache;
    try {
      cache = opened.get(30, TimeUnit.SECONDS);
      awaitShardsOpen(cache);
    } catch (Exception e) {
      say(out, "FAILED " + e);
      system.terminate();
      System.exit(3);
      return;
    }

    long now = System.currentTimeMillis();
    int verified = 0;
    for (String name : acknowledged) {
      CachedAnswer hit = cache.get(keyFor(name), now);
      if (hit != null && Arrays.equals(hit.wire(), answerFor(name, 0).wire())) {
        verified++;
      } else {
        say(out, "MISSING " + name);
      }
    }
    say(out, "VERIFIED " + verified);
    say(out, "READY");

    Semaphore inFlight = new Semaphore(IN_FLIGHT);
    long deadline = System.nanoTime() + MAX_RUN_NANOS;
    for (int i = 0; i < maxFills && System.nanoTime() < deadline; i++) {
      if (!inFlight.tryAcquire(10, TimeUnit.SECONDS)) {
        say(out, "FAILED no fill committed for 10 s");
        break;
      }
      String name = "r" + run + "-" + i + ".example.test.";
      cache.fill(keyFor(name), answerFor(name, System.currentTimeMillis())).whenComplete((ok, failure) -> {
        // Only after the commit: this line is the promise the parent holds the cache to.
        if (Boolean.TRUE.equals(ok)) {
          say(out, "ACK " + name);
        }
        inFlight.release();
      });
    }
    inFlight.tryAcquire(IN_FLIGHT, 10, TimeUnit.SECONDS);
    say(out, "DONE");
    // Keep the cache open (and its directory locked) until killed, within the run's bound.
    long idle = deadline - System.nanoTime();
    if (idle > 0) {
      TimeUnit.NANOSECONDS.sleep(idle);
    }
    cache.close();
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    System.exit(0);
  }

  /** A flush is answered only once every shard has opened its store. */
  private static void awaitShardsOpen(LmdbAnswerCache cache) throws Exception {
    cache.flushName("not-cached.example.", 0).toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** One whole line per write, so a kill can cut the output only between lines or within the last. */
  private static void say(PrintStream out, String line) {
    synchronized (out) {
      out.print(line + "\n");
      out.flush();
    }
  }
}

package io.shoal.ingress;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.TtlRules;
import io.shoal.cache.WhenFull;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.testing.DnsClient;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import kamon.Kamon;
import kamon.metric.Counter;
import org.junit.AfterClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * Write-through with a cache whose fills fail (a disk error) or never commit (a shard that is
 * down): the client still gets its answer, promptly, and the failure is counted.
 */
public class WriteThroughFailureSpec extends JUnitSuite {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final InetSocketAddress CLIENT = new InetSocketAddress("127.0.0.1", 40001);

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  /** A memory cache whose fills end as {@code fills} says instead of storing. */
  private static final class BrokenFills implements AnswerCache {
    final MemoryAnswerCache held;
    final Supplier<CompletionStage<Boolean>> fills;

    BrokenFills(MemoryAnswerCache held, Supplier<CompletionStage<Boolean>> fills) {
      this.held = held;
      this.fills = fills;
    }

    @Override
    public String name() {
      return held.name();
    }

    @Override
    public CachedAnswer get(CacheKey key, long nowMillis) {
      return held.get(key, nowMillis);
    }

    @Override
    public CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer) {
      return fills.get();
    }

    @Override
    public CompletionStage<Integer> flushName(String name, int qtype) {
      return held.flushName(name, qtype);
    }

    @Override
    public CompletionStage<Boolean> removeIfStoredBy(CacheKey key, long storedAtMillis) {
      return held.removeIfStoredBy(key, storedAtMillis);
    }

    @Override
    public void entries(java.util.function.BiConsumer<CacheKey, CachedAnswer> sink) {
      held.entries(sink);
    }

    @Override
    public long size() {
      return held.size();
    }

    @Override
    public void close() {}
  }

  private static long failures(String cache, String reason) {
    Counter c = Kamon.counter("shoal.cache.fill.failures")
        .withTag("cache", cache).withTag("backend", "memory").withTag("reason", reason);
    return ((Counter.LongAdder) c).snapshot(false);
  }

  /** Sends one miss through a write-through worker whose cache is {@code cache}; returns the reply. */
  private static Message missThrough(String cacheName, Supplier<CompletionStage<Boolean>> fills) throws Exception {
    CacheMetrics metrics = new CacheMetrics(cacheName, "memory");
    BrokenFills cache = new BrokenFills(new MemoryAnswerCache(cacheName, 100, WhenFull.EVICT_ONE, metrics), fills);
    TestProbe<IngressWorkerSpec.Forward> upstream = testKit.createTestProbe();
    TestProbe<IngressWorkerSpec.Reply> client = testKit.createTestProbe();
    Profile profile = new Profile("default", cache, metrics, new TtlRules(0, 86400, 900, 5),
        IngressWorkerSpec.forwardingTo(upstream));
    AtomicInteger pending = new AtomicInteger(1);
    ActorRef<IngressWorker.Command> worker = testKit.spawn(IngressWorker.create(
        new ProfileTable(Map.of(".", profile)), FillMode.WRITE_THROUGH, System::currentTimeMillis, pending,
        new ServerMetrics()));
    worker.tell(new IngressWorker.Resolve(DnsQuery.parse(DnsClient.query(7, "w.example.test.", Type.A, null).toWire()),
        CLIENT, Protocol.UDP, IngressWorkerSpec.socketTo(client)));
    IngressWorkerSpec.Forward forward = upstream.expectMessageClass(IngressWorkerSpec.Forward.class);
    forward.outcome().complete(IngressWorkerSpec.answerTo(forward));
    // Well past the bound on the wait, well short of a shard's restart back-off.
    Message reply = new Message(client.expectMessageClass(IngressWorkerSpec.Reply.class, Fetches.FILL_WAIT.plusSeconds(3)).wire());
    assertEquals(0, pending.get());
    assertNull("nothing was stored", cache.get(CacheKey.of("w.example.test.", Type.A, DClass.IN, 0), System.currentTimeMillis()));
    return reply;
  }

  @Test
  public void aFillThatFailsIsAnsweredAndCounted() throws Exception {
    long before = failures("wt-failed", "failed");
    Message reply = missThrough("wt-failed", () -> CompletableFuture.failedFuture(new IOException("EIO on commit")));
    assertEquals(Rcode.NOERROR, reply.getRcode());
    assertEquals(7, reply.getHeader().getID());
    assertEquals(before + 1, failures("wt-failed", "failed"));
  }

  @Test
  public void aFillTheCacheRefusesIsCountedAsFailed() throws Exception {
    long before = failures("wt-refused", "failed");
    Message reply = missThrough("wt-refused", () -> CompletableFuture.completedFuture(false));
    assertEquals(Rcode.NOERROR, reply.getRcode());
    assertEquals(before + 1, failures("wt-refused", "failed"));
  }

  @Test
  public void aFillThatNeverCommitsDoesNotHoldTheClient() throws Exception {
    long before = failures("wt-down", "timeout");
    Message reply = missThrough("wt-down", CompletableFuture::new);
    assertEquals(Rcode.NOERROR, reply.getRcode());
    assertEquals(before + 1, failures("wt-down", "timeout"));
  }
}

package io.shoal.dnssec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.shoal.config.DnssecSettings;
import io.shoal.metrics.DnssecMetrics;
import io.shoal.upstream.Upstream;
import io.shoal.wire.DnsQuery;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.DSRecord;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * Validation's own threads are bounded: when every one is busy and the queue is full, a new
 * validation ends at once (indeterminate, which the worker answers as SERVFAIL or stale) instead
 * of waiting behind the slow ones.
 */
class ValidationThreadsTest {
  @Test
  void aFullPoolEndsANewValidationAtOnceInsteadOfQueueingIt() throws Exception {
    ThreadPoolExecutor pool = ValidationThreads.create(1, 1);
    CountDownLatch release = new CountDownLatch(1);
    try {
      // One slow validation step holds the only thread, another waits in the only queue slot.
      pool.execute(() -> await(release));
      pool.execute(() -> await(release));
      Name zone = Name.fromConstantString("signed.test.");
      DnssecSettings settings = new DnssecSettings(DnssecSettings.Mode.ON,
          List.of(new DSRecord(zone, DClass.IN, 3600, 1, 13, 2, new byte[32])), List.of(), false,
          DnssecSettings.CryptoProvider.AUTO, 1000, DnssecSettings.DEFAULT_MAX_NSEC3_ITERATIONS,
          DnssecSettings.DEFAULT_MAX_SIGNATURE_CHECKS);
      Upstream upstream = query -> {
        try {
          Message reply = new Message(query.packet());
          reply.getHeader().setFlag(Flags.QR);
          return CompletableFuture.completedFuture(new Upstream.Answered(reply.toWire(), "test"));
        } catch (Exception e) {
          return CompletableFuture.completedFuture(new Upstream.Failed(e.toString()));
        }
      };
      ValidatingUpstream validating = new ValidatingUpstream(settings, upstream, Clock.systemUTC(),
          new DnssecMetrics(null), pool, "default", null, java.time.Duration.ofSeconds(8));
      Message q = Message.newQuery(Record.newRecord(Name.fromConstantString("www.signed.test."), Type.A, DClass.IN));
      CompletionStage<Upstream.Outcome> outcome = validating.forward(DnsQuery.parse(q.toWire()));
      Upstream.Outcome o = outcome.toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertInstanceOf(Upstream.Failed.class, o, "ended, not queued: " + o);
      assertEquals(1, release.getCount(), "while the slow steps still held the pool");
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

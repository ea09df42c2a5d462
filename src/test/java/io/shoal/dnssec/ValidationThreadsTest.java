package io.shoal.dnssec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.DnssecSettings;
import io.shoal.metrics.DnssecMetrics;
import io.shoal.upstream.Upstream;
import io.shoal.wire.DnsQuery;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
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
    ValidationThreads pool = new ValidationThreads(1, 1);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    try {
      // One slow validation step holds the only thread, another waits in the only queue slot.
      pool.execute(() -> {
        running.countDown();
        await(release);
      });
      assertTrue(running.await(30, TimeUnit.SECONDS), "the only thread took the first step");
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
      pool.stop();
    }
  }

  /**
   * A flood of one zone's validation steps delays another zone's by one step, not by the flood:
   * the zones' lanes take turns on the threads.
   */
  @Test
  void anotherZonesValidationRunsNextNotAfterTheFlood() throws Exception {
    ValidationThreads pool = new ValidationThreads(1, 1000);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    List<String> ran = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch done = new CountDownLatch(101);
    try {
      pool.execute(() -> {
        running.countDown();
        await(release);
      });
      assertTrue(running.await(30, TimeUnit.SECONDS), "the only thread took the blocking step");
      for (int i = 0; i < 100; i++) {
        String label = "flood-" + i;
        pool.validationOf(Name.fromConstantString("n" + i + ".slow.test.")).execute(() -> {
          ran.add(label);
          done.countDown();
        });
      }
      pool.validationOf(Name.fromConstantString("www.other.test.")).execute(() -> {
        ran.add("other");
        done.countDown();
      });
      release.countDown();
      assertTrue(done.await(30, TimeUnit.SECONDS), "every step ran");
      assertEquals(List.of("flood-0", "other"), ran.subList(0, 2), "the other zone's step ran second: " + ran);
    } finally {
      release.countDown();
      pool.stop();
    }
  }

  /**
   * Within a zone the validation that began first finishes first: a later step of an earlier
   * validation goes before the first steps of validations that began after it.
   */
  @Test
  void anEarlierValidationsLaterStepGoesBeforeNewerValidations() throws Exception {
    ValidationThreads pool = new ValidationThreads(1, 1000);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    List<String> ran = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch done = new CountDownLatch(11);
    try {
      ValidationThreads.Validation first = pool.validationOf(Name.fromConstantString("a.zone.test."));
      pool.execute(() -> {
        running.countDown();
        await(release);
      });
      assertTrue(running.await(30, TimeUnit.SECONDS), "the only thread took the blocking step");
      for (int i = 0; i < 10; i++) {
        String label = "newer-" + i;
        pool.validationOf(Name.fromConstantString("n" + i + ".zone.test.")).execute(() -> {
          ran.add(label);
          done.countDown();
        });
      }
      first.execute(() -> {
        ran.add("first");
        done.countDown();
      });
      release.countDown();
      assertTrue(done.await(30, TimeUnit.SECONDS), "every step ran");
      assertEquals("first", ran.get(0), "the earliest validation's step went first: " + ran);
    } finally {
      release.countDown();
      pool.stop();
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

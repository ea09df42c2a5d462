package io.shoal.ingress;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import io.shoal.cache.TtlRules;
import io.shoal.cache.WhenFull;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.testing.DnsClient;
import io.shoal.upstream.Upstream;
import io.shoal.wire.DnsQuery;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.AfterClass;
import org.junit.Before;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** IngressWorker driven by messages, with test probes standing in for the upstream group and the client socket. */
public class IngressWorkerSpec extends JUnitSuite {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final InetSocketAddress CLIENT = new InetSocketAddress("127.0.0.1", 40000);

  /** A question the worker forwarded, and the stage the test completes as the upstream. */
  record Forward(DnsQuery query, CompletableFuture<Upstream.Outcome> outcome) {}

  /** A reply the worker sent through the client's socket. */
  record Reply(byte[] wire, InetSocketAddress client) {}

  /** An upstream group that hands each forwarded question to {@code probe} to answer. */
  static Upstream forwardingTo(TestProbe<Forward> probe) {
    return query -> {
      CompletableFuture<Upstream.Outcome> outcome = new CompletableFuture<>();
      probe.getRef().tell(new Forward(query, outcome));
      return outcome;
    };
  }

  /** A client socket whose replies arrive at {@code probe}. */
  static ReplyPath socketTo(TestProbe<Reply> probe) {
    return (wire, to) -> probe.getRef().tell(new Reply(wire, to));
  }

  private TestProbe<Forward> upstream;
  private TestProbe<Reply> client;
  private MemoryAnswerCache cache;
  private AtomicLong clock;
  private AtomicInteger pending;
  private ActorRef<IngressWorker.Command> worker;

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  @Before
  public void setUp() {
    upstream = testKit.createTestProbe();
    client = testKit.createTestProbe();
    CacheMetrics metrics = new CacheMetrics("worker-spec", "memory");
    cache = new MemoryAnswerCache("worker-spec", 100, WhenFull.EVICT_ONE, metrics);
    Profile profile = new Profile("default", cache, metrics, new TtlRules(0, 86400, 900, 5), forwardingTo(upstream));
    clock = new AtomicLong(1_700_000_000_000L);
    pending = new AtomicInteger();
    worker = testKit.spawn(IngressWorker.create(new ProfileTable(Map.of(".", profile)), FillMode.WRITE_BEHIND,
        clock::get, pending, new ServerMetrics()));
  }

  private IngressWorker.Resolve resolve(int id, String name) throws Exception {
    pending.incrementAndGet();
    DnsQuery q = DnsQuery.parse(DnsClient.query(id, name, Type.A, null).toWire());
    return new IngressWorker.Resolve(q, CLIENT, Protocol.UDP, socketTo(client));
  }

  /** What the upstream would answer to {@code forward}: one A record, TTL 120. */
  static Upstream.Answered answerTo(Forward forward) throws Exception {
    Message q = new Message(forward.query().upstreamQuery(777));
    Message r = new Message(777);
    r.getHeader().setFlag(Flags.QR);
    r.addRecord(q.getQuestion(), Section.QUESTION);
    r.addRecord(new ARecord(q.getQuestion().getName(), DClass.IN, 120, InetAddress.getByName("192.0.2.44")),
        Section.ANSWER);
    return new Upstream.Answered(r.toWire(), "probe");
  }

  @Test
  public void missGoesUpstreamThenAMissQueuedBehindItIsServedFromTheCache() throws Exception {
    worker.tell(resolve(1, "a.example.test."));
    Forward forward = upstream.expectMessageClass(Forward.class);
    forward.outcome().complete(answerTo(forward));
    Message first = new Message(client.expectMessageClass(Reply.class).wire());
    assertEquals(1, first.getHeader().getID());
    assertEquals(120, first.getSection(Section.ANSWER).get(0).getTTL());

    clock.addAndGet(20_000);
    worker.tell(resolve(2, "A.Example.Test."));
    Reply hit = client.expectMessageClass(Reply.class);
    upstream.expectNoMessage(Duration.ofMillis(100));
    Message second = new Message(hit.wire());
    assertEquals(2, second.getHeader().getID());
    assertEquals("A.Example.Test.", second.getQuestion().getName().toString());
    assertEquals(100, second.getSection(Section.ANSWER).get(0).getTTL());
    assertEquals(CLIENT, hit.client());
    assertEquals("every accepted query answered", 0, pending.get());
  }

  @Test
  public void identicalInFlightMissesGoUpstreamOnce() throws Exception {
    worker.tell(resolve(10, "b.example.test."));
    worker.tell(resolve(11, "B.example.test."));
    worker.tell(resolve(12, "b.EXAMPLE.test."));
    Forward forward = upstream.expectMessageClass(Forward.class);
    upstream.expectNoMessage(Duration.ofMillis(150));
    forward.outcome().complete(answerTo(forward));
    java.util.Set<Integer> ids = new java.util.HashSet<>();
    for (int i = 0; i < 3; i++) {
      ids.add(new Message(client.expectMessageClass(Reply.class).wire()).getHeader().getID());
    }
    assertEquals(java.util.Set.of(10, 11, 12), ids);
    assertEquals(0, pending.get());
  }

  @Test
  public void failedLookupIsServfailAndIsNotCached() throws Exception {
    worker.tell(resolve(20, "c.example.test."));
    upstream.expectMessageClass(Forward.class).outcome().complete(new Upstream.Failed("deadline passed"));
    Reply reply = client.expectMessageClass(Reply.class, Duration.ofSeconds(3));
    Message m = new Message(reply.wire());
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertEquals(20, m.getHeader().getID());
    assertEquals(0, pending.get());

    worker.tell(resolve(21, "c.example.test."));
    assertNotNull("a failed lookup is retried, not cached", upstream.expectMessageClass(Forward.class));
  }

  @Test
  public void upstreamFailureIsServfailForEveryWaiter() throws Exception {
    worker.tell(resolve(30, "d.example.test."));
    worker.tell(resolve(31, "d.example.test."));
    Forward forward = upstream.expectMessageClass(Forward.class);
    forward.outcome().complete(new Upstream.Failed("all upstreams timed out"));
    for (int i = 0; i < 2; i++) {
      assertEquals(Rcode.SERVFAIL, new Message(client.expectMessageClass(Reply.class).wire()).getRcode());
    }
    assertEquals(0, cache.size());
  }
}

package io.shoal.bench;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.access.AccessControl;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.ShoalConfig;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.IngressWorker;
import io.shoal.ingress.Prefetch;
import io.shoal.ingress.Protocol;
import io.shoal.ingress.QueryPlan;
import io.shoal.ingress.ReplyPath;
import io.shoal.loop.LoopDetector;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.ratelimit.MissBudget;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ScannedAnswer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * A warm hit through the front door, {@link Ingress#offer}, as a UDP socket's reading thread makes
 * it, without the socket: access control, parse, the loop check, the profile, the cache look-up,
 * the prefetch check and rendering into the reader's own buffer. The plan is the default
 * configuration's (access control of the private networks, serve-stale and prefetch on, no miss
 * budget, no local data, no policy, no query log), single node. {@link QueryPathBenchmark} is the
 * same hit without the front door's decisions around it.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
public class IngressHitBenchmark {
  /** Cached names, each with its own answer (so the answer's question is the name asked). */
  private static final int NAMES = 4096;

  private static final InetSocketAddress CLIENT = new InetSocketAddress(InetAddress.getLoopbackAddress(), 53000);

  private byte[][] queries;
  private Ingress ingress;
  private ActorSystem<IngressWorker.Command> system;
  private final RenderingSocket socket = new RenderingSocket();
  private int next;

  /** The reply path a UDP socket's reader is for a hit: renders it into a buffer of its own. */
  static final class RenderingSocket implements ReplyPath {
    final byte[] out = new byte[65535 + 64];
    int length;

    @Override
    public void send(byte[] wire, InetSocketAddress client) {
      length = wire.length;
    }

    @Override
    public void sendHit(CachedAnswer hit, DnsQuery query, long nowMillis, int sizeLimit, InetSocketAddress client) {
      length = hit.renderInto(query, nowMillis, sizeLimit, out);
    }

    @Override
    public void drop() {
      length = -1;
    }
  }

  @Setup(Level.Trial)
  public void start() throws Exception {
    Config raw = ConfigFactory.parseString(String.join("\n",
            "shoal.upstreams.default.servers = [\"127.0.0.1:1\"]",
            "shoal.dnssec.validation = off"))
        .withFallback(ConfigFactory.load())
        .resolve();
    ShoalConfig config = ShoalConfig.from(raw);
    long now = System.currentTimeMillis();
    MemoryAnswerCache cache =
        new MemoryAnswerCache("bench", NAMES * 2, WhenFull.EVICT_ONE, new CacheMetrics("bench", "memory"));
    ProfileTable profiles = new ProfileTable(Map.of(".", new Profile("default", cache,
        new CacheMetrics("bench", "memory"), null, null)));
    queries = new byte[NAMES][];
    for (int i = 0; i < NAMES; i++) {
      Name qname = Name.fromString("www" + i + ".example.test.");
      Message answer = AnswerCacheBenchmark.response(qname);
      answer.addRecord(new ARecord(qname, DClass.IN, 3600, InetAddress.getByName("192.0.2.1")), Section.ANSWER);
      answer.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
      ScannedAnswer scan = ScannedAnswer.fromUpstream(answer.toWire());
      Message query = Message.newQuery(Record.newRecord(qname, Type.A, DClass.IN));
      query.getHeader().setID(i & 0xFFFF);
      queries[i] = query.toWire();
      cache.fill(DnsQuery.parse(queries[i]).key(), CachedAnswer.of(scan, now, now + scan.minTtl() * 1000L))
          .toCompletableFuture().join();
    }
    ServerMetrics metrics = new ServerMetrics();
    QueryPlan plan = new QueryPlan(profiles, new AccessControl(config.accessControl(), metrics),
        new MissBudget(config.missBudget()), config.replies(), null, null, null, new LoopDetector(config, null),
        config.serveStale(), config.prefetch(), Duration.ofSeconds(10));
    // A hit never reaches a worker; the worker is there because the front door needs one.
    system = ActorSystem.create(Behaviors.ignore(), "bench");
    ingress = new Ingress(plan, System::currentTimeMillis, List.of(system), new AtomicInteger[] {new AtomicInteger()},
        config.maxPendingPerWorker(), metrics, new Prefetch(config.prefetch(), 1024), new OwnerDirectory(),
        config.cluster().ownerTimeout());
  }

  @TearDown(Level.Trial)
  public void stop() {
    system.terminate();
  }

  /** One warm hit through the front door; returns the reply's length. */
  @Benchmark
  public int hit() {
    ingress.offer(queries[next++ & (NAMES - 1)], CLIENT, Protocol.UDP, socket);
    return socket.length;
  }
}

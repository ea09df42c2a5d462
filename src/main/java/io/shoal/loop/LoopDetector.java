package io.shoal.loop;

import akka.actor.typed.ActorSystem;
import io.shoal.config.ProfileSettings;
import io.shoal.config.ShoalConfig;
import io.shoal.config.UpstreamGroupSettings;
import io.shoal.upstream.Upstream;
import io.shoal.upstream.UpstreamSelector;
import io.shoal.wire.BadQuery;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Gauge;
import kamon.tag.TagSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * Finds forwarding loops the way CoreDNS's {@code loop} plugin does, by probing: after start, each
 * server of each upstream group is asked {@code HINFO <random>.<random>.loop-probe.<suffix>}, a
 * name nobody but this node knows. If that question ever arrives at this node's own listeners,
 * the server handed it back (directly, through other resolvers, or through a Service in front of
 * this node): the group loops. That is logged once, shown in
 * {@code shoal_upstream_loop_detected{group}}, and from then on the group's misses are answered
 * SERVFAIL at once ({@code shoal_upstream_loop_servfails_total{group}}) instead of being sent
 * round the loop.
 *
 * <p>One sighting is proof, where CoreDNS waits for three: CoreDNS sends its probe to itself, so
 * its first sighting is its own query, and its forwarder sends every copy on. Here the probe goes
 * to the upstream, and the workers coalesce identical questions in flight, so a loop may bring
 * the probe back only once.
 */
public final class LoopDetector {
  private static final Logger log = LoggerFactory.getLogger(LoopDetector.class);
  /** Type HINFO, as CoreDNS probes: no resolver has a reason to send it to us on its own. */
  private static final int HINFO = Type.HINFO;
  /** How long probing goes on while no server of a group answers (CoreDNS: 30 s too). */
  static final Duration PROBE_WINDOW = Duration.ofSeconds(30);
  private static final Duration PROBE_PAUSE = Duration.ofSeconds(1);

  private final SecureRandom random = new SecureRandom();
  private final Map<String, GroupState> groups = new LinkedHashMap<>();
  /** Every probe of every group, an array so the front door's check allocates nothing. */
  private final Probe[] probes;

  /** A group's loop state and instruments. */
  private static final class GroupState {
    final UpstreamGroupSettings settings;
    final List<Probe> probes = new ArrayList<>();
    final AtomicBoolean looping = new AtomicBoolean();
    final Gauge detected;
    final Counter servfails;

    GroupState(UpstreamGroupSettings settings, TagSet tags) {
      this.settings = settings;
      this.detected = Kamon.gauge("shoal.upstream.loop.detected",
          "1 when a probe sent to the upstream group came back to this node (a forwarding loop)").withTags(tags);
      this.servfails = Kamon.counter("shoal.upstream.loop.servfails",
          "Misses answered SERVFAIL instead of being forwarded into a detected loop").withTags(tags);
      detected.update(0);
    }
  }

  /** One server's probe: the question, and its name's wire form to recognise it when it comes back. */
  private record Probe(GroupState group, InetSocketAddress server, DnsQuery query, byte[] name, String shown) {
    boolean is(CacheKey key) {
      int len = key.nameLength();
      return len == name.length && java.util.Arrays.equals(key.bytes(), 0, len, name, 0, len);
    }
  }

  /**
   * Plans a probe for each server of each group a profile uses, under that profile's first
   * suffix, so a forwarder that routes by zone routes the probe as it routes the profile's names.
   *
   * @param node the cluster node label of the metrics, or null for a single node
   */
  public LoopDetector(ShoalConfig config, String node) {
    List<Probe> all = new ArrayList<>();
    for (ProfileSettings profile : config.profiles()) {
      if (groups.containsKey(profile.upstreams())) {
        continue;
      }
      TagSet tags = TagSet.of("group", profile.upstreams());
      GroupState group = new GroupState(config.upstreams().get(profile.upstreams()),
          node == null ? tags : tags.withTag("node", node));
      groups.put(profile.upstreams(), group);
      String suffix = profile.match().get(0);
      for (InetSocketAddress server : group.settings.servers()) {
        if (group.settings.dot().containsKey(server)) {
          // The probes go over UDP; a DoT server would only see a stray datagram on its TLS port.
          continue;
        }
        Probe p = probe(group, server, suffix);
        if (p != null) {
          group.probes.add(p);
          all.add(p);
        }
      }
    }
    this.probes = all.toArray(Probe[]::new);
  }

  private Probe probe(GroupState group, InetSocketAddress server, String suffix) {
    String name = Long.toUnsignedString(random.nextLong() >>> 2) + "." + Long.toUnsignedString(random.nextLong() >>> 2)
        + ".loop-probe." + (suffix.equals(".") ? "" : suffix);
    try {
      byte[] packet = Message.newQuery(Record.newRecord(Name.fromString(name), HINFO, DClass.IN)).toWire();
      DnsQuery query = DnsQuery.parse(packet);
      return new Probe(group, server, query, CacheKey.nameToWire(name), "HINFO " + name);
    } catch (IOException | BadQuery | RuntimeException e) {
      // A suffix near the 255-octet limit leaves no room for the probe's labels.
      log.warn("no loop probe for upstream group '{}' under '{}': {}", group.settings.name(), suffix, e.toString());
      return null;
    }
  }

  /**
   * The front door's check, on the thread that read the query: true when {@code query} is one
   * of this node's probes come back, which proves a loop; the caller answers it SERVFAIL, so the
   * probe goes no further round the loop. Costs one comparison for any type but HINFO.
   */
  public boolean cameBack(DnsQuery query) {
    if (query.qtype() != HINFO) {
      return false;
    }
    CacheKey key = query.key();
    for (Probe p : probes) {
      if (p.is(key)) {
        loopFound(p);
        return true;
      }
    }
    return false;
  }

  private void loopFound(Probe p) {
    GroupState group = p.group();
    if (group.looping.compareAndSet(false, true)) {
      group.detected.update(1);
      log.error("forwarding loop in upstream group '{}': the probe \"{}\" sent to {} came back to this node. Its "
              + "queries are answered SERVFAIL from now on instead of going round the loop, until the loop is "
              + "fixed and shoal restarted. The server forwards to this node, directly or through other "
              + "resolvers or a Service in front of it (see docs/running-safely.md, \"Forwarding loops\")",
          group.settings.name(), p.shown(), SelfUpstreamCheck.show(p.server()));
    }
  }

  /** {@code upstream}, the forwarder of {@code group}, which fails at once once the group is known to loop. */
  public Upstream guard(String group, Upstream upstream) {
    GroupState state = groups.get(group);
    if (state == null) {
      return upstream;
    }
    CompletionStage<Upstream.Outcome> refused = CompletableFuture.completedFuture(
        new Upstream.Failed("forwarding loop detected in upstream group '" + group + "'"));
    return query -> {
      if (state.looping.get()) {
        state.servfails.increment();
        return refused;
      }
      return upstream.forward(query);
    };
  }

  /** Whether a loop was found in {@code group}. */
  public boolean looping(String group) {
    GroupState state = groups.get(group);
    return state != null && state.looping.get();
  }

  /**
   * Sends the probes, over the upstream sockets the workers use, once the listeners are serving.
   * A group whose servers all fail to answer is probed again each second for {@link
   * #PROBE_WINDOW} (it may be starting too); once one answers, or a loop is found, it stops.
   */
  public void start(UpstreamSelector sockets, ActorSystem<?> system) {
    long until = System.nanoTime() + PROBE_WINDOW.toNanos();
    for (GroupState group : groups.values()) {
      round(group, sockets, system, until);
    }
  }

  private void round(GroupState group, UpstreamSelector sockets, ActorSystem<?> system, long until) {
    if (group.looping.get() || group.probes.isEmpty()) {
      return;
    }
    AtomicInteger left = new AtomicInteger(group.probes.size());
    AtomicBoolean answered = new AtomicBoolean();
    for (Probe p : group.probes) {
      long deadline = System.nanoTime() + group.settings.timeout().toNanos();
      sockets.udp(p.server(), p.query(), deadline)
          .whenComplete((reply, failure) -> {
            if (reply != null) {
              answered.set(true);
            }
            if (left.decrementAndGet() == 0 && !answered.get() && System.nanoTime() - until < 0) {
              system.scheduler().scheduleOnce(PROBE_PAUSE, () -> round(group, sockets, system, until),
                  system.executionContext());
            }
          });
    }
  }
}

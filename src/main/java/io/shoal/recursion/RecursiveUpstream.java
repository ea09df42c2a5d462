package io.shoal.recursion;

import io.shoal.config.RecursionSettings;
import io.shoal.config.UpstreamGroupSettings;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.RecursionMetrics;
import io.shoal.upstream.Upstream;
import io.shoal.upstream.UpstreamSelector;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import kamon.metric.Gauge;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.DNSInput;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * An upstream group that resolves misses itself, from the root hints (mode {@code recursive}) or
 * from the authoritative servers configured for the profiles' suffixes (mode {@code stub}),
 * behind the same {@link Upstream#forward} the forwarding groups offer: coalescing, the answer
 * cache, serve-stale, prefetch, DNSSEC validation (whose DNSKEY and DS queries come back here) and
 * cluster ownership work on its answers unchanged.
 *
 * <p>What it learns of the tree (delegations, name-server addresses, server round-trip times and
 * lameness) it keeps itself, bounded; each client question gets one {@link Budget}. The answer it
 * hands on is a normal response: the answer chain with its RRSIGs, and for a denial the SOA and
 * NSEC/NSEC3 records with theirs.
 */
public final class RecursiveUpstream implements Upstream {
  private static final Logger log = LoggerFactory.getLogger(RecursiveUpstream.class);
  /** While the root is unreachable every miss primes again: reported once a minute, with a count. */
  private final FailureLog primingFailed = new FailureLog(log, 60);
  /** The {@code server} of answers made here, for the query log. */
  static final String SERVER = "recursion";

  final RecursionSettings settings;
  final UpstreamSelector sockets;
  final ZoneCuts cuts;
  final RRsets rrsets;
  final AuthorityServers servers;
  final RecursionMetrics metrics;
  final Executor executor;
  final long attemptMaxNanos;
  private final int authorityPort;
  private final List<ZoneCut> stubs;
  private final Gauge cutEntries;
  private final Gauge serverEntries;
  private final Gauge rrsetEntries;
  private CompletableFuture<ZoneCut> priming;

  /**
   * A resolving group: {@code stubZones} are the suffixes whose questions go to the group's
   * servers (mode {@code stub}); everything else, and everything in mode {@code recursive}, is
   * resolved from the root.
   */
  public RecursiveUpstream(UpstreamGroupSettings group, List<Name> stubZones, UpstreamSelector sockets,
      RecursionMetrics metrics) {
    this(group, stubZones, sockets, metrics, ForkJoinPool.commonPool());
  }

  /**
   * The same, running the steps between authority exchanges on {@code steps} (never on the
   * thread that reads the authorities' sockets): where its answers go on to next, when that is
   * a pool of its own, so no thread hands an answer to another one on the way.
   */
  public RecursiveUpstream(UpstreamGroupSettings group, List<Name> stubZones, UpstreamSelector sockets,
      RecursionMetrics metrics, Executor steps) {
    this(group, stubZones, sockets, metrics, 53, steps);
  }

  /** @param authorityPort the port every authority is asked on: 53, other only in tests */
  RecursiveUpstream(UpstreamGroupSettings group, List<Name> stubZones, UpstreamSelector sockets,
      RecursionMetrics metrics, int authorityPort, Executor executor) {
    this.settings = group.recursion();
    this.sockets = sockets;
    this.metrics = metrics;
    this.executor = executor;
    this.authorityPort = authorityPort;
    this.attemptMaxNanos = group.timeout().toNanos();
    this.cuts = new ZoneCuts(settings.zoneCuts());
    // Bounded as the delegations are: a walk keeps about one DS, DNSKEY and address set per cut.
    this.rrsets = new RRsets(settings.zoneCuts());
    this.servers = new AuthorityServers(settings.servers());
    this.cutEntries = metrics.entries(group.name(), "zone_cuts");
    this.serverEntries = metrics.entries(group.name(), "servers");
    this.rrsetEntries = metrics.entries(group.name(), "rrsets");
    List<ZoneCut> stubCuts = new ArrayList<>();
    if (group.mode() == UpstreamGroupSettings.Mode.STUB) {
      for (Name zone : stubZones) {
        // Named by the operator: asked even on loopback, at the port given.
        stubCuts.add(new ZoneCut(zone, List.of(zone), Map.of(zone, List.copyOf(group.servers())), false,
            Long.MAX_VALUE, true));
      }
    }
    this.stubs = List.copyOf(stubCuts);
  }

  /** Primes the root's servers (RFC 8109) in the background, so the first miss need not. */
  public void start() {
    prime();
  }

  /**
   * Forgets the delegations, name-server addresses and kept RRsets at or below {@code name}, and
   * for the root every server's record.
   */
  public int flush(Name name) {
    int removed = cuts.flush(name) + rrsets.flush(name);
    if (name.equals(Name.root)) {
      removed += servers.size();
      servers.clear();
    }
    updateGauges();
    return removed;
  }

  /** The authority address to ask at {@code a}, or null when query_loopback forbids it. */
  InetSocketAddress authority(InetAddress a) {
    if (a.isAnyLocalAddress() || a.isMulticastAddress()) {
      return null;
    }
    if (!settings.queryLoopback() && a.isLoopbackAddress()) {
      return null;
    }
    if (!(a instanceof Inet4Address) && !(a instanceof Inet6Address)) {
      return null;
    }
    return new InetSocketAddress(a, authorityPort);
  }

  /**
   * Where to start for {@code name}: a configured stub zone above it (unless a delegation below
   * the stub zone is known), else the closest known cut, else the root after priming.
   */
  CompletableFuture<ZoneCut> startCut(Name name, boolean parentSide) {
    long now = System.nanoTime();
    ZoneCut stub = null;
    for (ZoneCut s : stubs) {
      boolean inside = parentSide ? name.subdomain(s.zone()) && !name.equals(s.zone()) : name.subdomain(s.zone());
      if (inside && (stub == null || s.zone().labels() > stub.zone().labels())) {
        stub = s;
      }
    }
    ZoneCut known = cuts.closest(name, parentSide, now);
    if (stub != null && (known == null || !known.zone().subdomain(stub.zone()) || known.zone().equals(stub.zone()))) {
      return CompletableFuture.completedFuture(stub);
    }
    if (known != null) {
      return CompletableFuture.completedFuture(known);
    }
    return prime();
  }

  /**
   * Asks the root hints' servers for the root's NS set and keeps it for its TTL; one priming at a
   * time, which every miss arriving meanwhile waits for. When it fails the hints themselves are
   * used (not kept), and the next miss primes again.
   */
  private synchronized CompletableFuture<ZoneCut> prime() {
    if (priming != null) {
      return priming;
    }
    ZoneCut hints = hintsCut();
    CompletableFuture<ZoneCut> p = new Resolution(this, new Budget(settings, System.nanoTime()))
        .prime(hints)
        .thenApply(reply -> {
          ZoneCut root = rootCut(reply);
          if (root == null) {
            return hints;
          }
          cuts.put(root);
          log.debug("primed the root: {} servers", root.nsNames().size());
          return root;
        })
        .exceptionally(failure -> {
          primingFailed.warn("priming the root from " + settings.hintsSource() + " failed: "
              + Resolution.unwrap(failure).getMessage());
          return hints;
        });
    priming = p;
    p.whenComplete((cut, failure) -> {
      synchronized (this) {
        priming = null;
      }
    });
    return p;
  }

  private ZoneCut hintsCut() {
    List<Name> names = new ArrayList<>();
    Map<Name, List<InetSocketAddress>> glue = new LinkedHashMap<>();
    for (Record r : settings.rootHints()) {
      if (r instanceof NSRecord ns) {
        names.add(ns.getTarget());
      }
    }
    for (Record r : settings.rootHints()) {
      InetAddress a = r instanceof ARecord ar ? ar.getAddress() : r instanceof AAAARecord ar ? ar.getAddress() : null;
      InetSocketAddress at = a == null || !names.contains(r.getName()) ? null : authority(a);
      if (at != null) {
        glue.computeIfAbsent(r.getName(), k -> new ArrayList<>()).add(at);
      }
    }
    return new ZoneCut(Name.root, List.copyOf(names), Map.copyOf(glue), true, System.nanoTime(), false);
  }

  /** The root's delegation from a priming answer, with the addresses of its servers from the same answer. */
  private ZoneCut rootCut(Message reply) {
    List<Name> names = new ArrayList<>();
    long ttl = Long.MAX_VALUE;
    for (Record r : reply.getSection(Section.ANSWER)) {
      if (r instanceof NSRecord ns && ns.getName().equals(Name.root)) {
        names.add(ns.getTarget());
        ttl = Math.min(ttl, ns.getTTL());
      }
    }
    if (names.isEmpty()) {
      return null;
    }
    Map<Name, List<InetSocketAddress>> glue = new LinkedHashMap<>();
    for (Record r : reply.getSection(Section.ADDITIONAL)) {
      InetAddress a = r instanceof ARecord ar ? ar.getAddress() : r instanceof AAAARecord ar ? ar.getAddress() : null;
      InetSocketAddress at = a == null || !names.contains(r.getName()) ? null : authority(a);
      if (at != null) {
        glue.computeIfAbsent(r.getName(), k -> new ArrayList<>()).add(at);
      }
    }
    if (glue.isEmpty()) {
      return null;
    }
    long seconds = Math.max(5, Math.min(ttl, 86_400));
    return new ZoneCut(Name.root, List.copyOf(names), Map.copyOf(glue), true,
        System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds), false);
  }

  @Override
  public CompletionStage<Outcome> forward(DnsQuery query) {
    Name name;
    try {
      DNSInput in = new DNSInput(query.packet());
      in.jump(12);
      name = new Name(in).canonicalize();
    } catch (IOException e) {
      return CompletableFuture.completedFuture(new Failed("question name: " + e.getMessage()));
    }
    if (query.qclass() != DClass.IN) {
      metrics.resolution("refused");
      return CompletableFuture.completedFuture(
          new Answered(reply(query, name, Rcode.REFUSED, List.of(), List.of()), SERVER));
    }
    Budget budget = new Budget(settings, System.nanoTime());
    CompletableFuture<Resolution.Result> resolution;
    try {
      resolution = new Resolution(this, budget).resolve(name, query.qtype(), 0);
    } catch (RuntimeException e) {
      resolution = CompletableFuture.failedFuture(e);
    }
    return resolution
        .orTimeout(settings.deadline().toNanos(), TimeUnit.NANOSECONDS)
        .handle((result, failure) -> {
          updateGauges();
          return outcome(query, name, result, failure);
        });
  }

  private void updateGauges() {
    cutEntries.update(cuts.size());
    serverEntries.update(servers.size());
    rrsetEntries.update(rrsets.size());
  }

  private Outcome outcome(DnsQuery query, Name name, Resolution.Result result, Throwable failure) {
    if (failure != null) {
      Throwable cause = Resolution.unwrap(failure);
      ExtendedError why;
      if (cause instanceof RecursionLimit rl) {
        if (rl.limit != null) {
          metrics.limitHit(rl.limit);
        }
        why = rl.why;
      } else if (cause instanceof TimeoutException) {
        metrics.limitHit(Budget.DEADLINE);
        why = new ExtendedError(22, "no answer within " + settings.deadline().toMillis() + " ms");
      } else {
        log.debug("resolving {} failed", name, cause);
        why = new ExtendedError(0, "resolution failed");
      }
      metrics.resolution("servfail");
      return new Answered(query.servfailToCache(), SERVER, why);
    }
    metrics.resolution(result.rcode() == Rcode.NXDOMAIN ? "nxdomain" : result.rcode() == Rcode.NOERROR
        ? "noerror" : Rcode.string(result.rcode()).toLowerCase(java.util.Locale.ROOT));
    return new Answered(reply(query, name, result.rcode(), result.answer(), result.authority()), SERVER);
  }

  /**
   * The response a forwarder would have given: the question as asked (lower case), RA, the answer
   * chain and authority records, DNSSEC records only for a DO query (or one asking for them).
   */
  private static byte[] reply(DnsQuery query, Name name, int rcode, List<Record> answer, List<Record> authority) {
    Message m = new Message(query.id());
    m.getHeader().setFlag(Flags.QR);
    m.getHeader().setFlag(Flags.RA);
    if (query.recursionDesired()) {
      m.getHeader().setFlag(Flags.RD);
    }
    if (query.checkingDisabled()) {
      m.getHeader().setFlag(Flags.CD);
    }
    m.getHeader().setRcode(rcode);
    m.addRecord(Record.newRecord(name, query.qtype(), query.qclass()), Section.QUESTION);
    for (Record r : answer) {
      if (keep(query, r)) {
        m.addRecord(r, Section.ANSWER);
      }
    }
    for (Record r : authority) {
      if (keep(query, r)) {
        m.addRecord(r, Section.AUTHORITY);
      }
    }
    if (query.edns()) {
      m.addRecord(new OPTRecord(DnsQuery.EDNS_UDP_SIZE, 0, 0, query.dnssecOk() ? ExtendedFlags.DO : 0),
          Section.ADDITIONAL);
    }
    return m.toWire();
  }

  private static boolean keep(DnsQuery query, Record r) {
    int t = r.getType();
    return query.dnssecOk() || t == query.qtype() || (t != Type.RRSIG && t != Type.NSEC && t != Type.NSEC3);
  }
}

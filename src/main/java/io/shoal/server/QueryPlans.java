package io.shoal.server;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorSystem;
import io.shoal.access.AccessControl;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CacheSettings;
import io.shoal.cache.TtlRules;
import io.shoal.config.DnssecSettings;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ProfileSettings;
import io.shoal.config.QueryLogSettings;
import io.shoal.config.ShoalConfig;
import io.shoal.config.UpstreamGroupSettings;
import io.shoal.dnssec.DenialProofs;
import io.shoal.dnssec.ValidatingUpstream;
import io.shoal.ingress.QueryPlan;
import io.shoal.local.LocalData;
import io.shoal.loop.LoopDetector;
import io.shoal.loop.SelfUpstreamCheck;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.DnssecMetrics;
import io.shoal.metrics.PolicyMetrics;
import io.shoal.metrics.ReloadMetrics;
import io.shoal.metrics.QueryLogMetrics;
import io.shoal.metrics.ServerMetrics;
import io.shoal.policy.ResponsePolicy;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.querylog.QueryLog;
import io.shoal.ratelimit.MissBudget;
import io.shoal.recursion.RecursiveUpstream;
import io.shoal.metrics.RecursionMetrics;
import io.shoal.upstream.DotExchanges;
import io.shoal.upstream.Upstream;
import io.shoal.upstream.UpstreamGroup;
import io.shoal.upstream.UpstreamSelector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Builds a node's {@link QueryPlan} from its configuration, at start and at every reload, and
 * retires what a new plan replaced. Everything that reads a file or can fail happens in {@link
 * #build}, before anything is swapped: a plan that cannot be built leaves the running one as it
 * was. Parts whose settings did not change are carried over (an upstream group keeps its servers'
 * health, a million-name blocklist is not read again); the caches are the node's, in every plan.
 */
final class QueryPlans {
  private final ActorSystem<?> system;
  private final Map<String, AnswerCache> caches;
  private final Map<String, CacheMetrics> cacheMetrics;
  private final LongSupplier clock;
  private final ServerMetrics metrics;
  private final String node;
  private final UpstreamSelector sockets;
  private final DotExchanges dot;
  private final DnssecMetrics dnssecMetrics;
  private final DenialProofs denials;
  private final PolicyMetrics policyMetrics;
  /** Where the file watchers report their reloads (shoal_config_last_reload_successful). */
  private final ReloadMetrics reloads;
  private final QueryLogMetrics queryLogMetrics;
  private final RecursionMetrics recursionMetrics;
  /**
   * The resolving (recursive and stub) groups by what they were built from: a reload that keeps a
   * group's settings and its stub zones keeps its zone cuts and server records.
   */
  private final Map<List<Object>, RecursiveUpstream> resolvers = new ConcurrentHashMap<>();
  private volatile Built current;
  /** Query logs a reload replaced, still taking the replies of queries that started before it. */
  private final Set<QueryLog> retiring = ConcurrentHashMap.newKeySet();

  /**
   * One plan and what it was built from: its config, and the upstream groups by their settings
   * (a group whose settings a reload keeps is the same group in the next plan).
   */
  record Built(ShoalConfig config, QueryPlan plan, Map<UpstreamGroupSettings, UpstreamGroup> groups) {}

  QueryPlans(
      ActorSystem<?> system, Map<String, AnswerCache> caches, Map<String, CacheMetrics> cacheMetrics,
      LongSupplier clock, ServerMetrics metrics, String node, UpstreamSelector sockets, DotExchanges dot) {
    this.system = system;
    this.caches = Map.copyOf(caches);
    this.cacheMetrics = Map.copyOf(cacheMetrics);
    this.clock = clock;
    this.metrics = metrics;
    this.node = node;
    this.reloads = ReloadMetrics.of(node);
    this.sockets = sockets;
    this.dot = dot;
    this.dnssecMetrics = new DnssecMetrics(node);
    this.denials = new DenialProofs(dnssecMetrics, clock);
    this.policyMetrics = new PolicyMetrics(node);
    this.queryLogMetrics = new QueryLogMetrics(node);
    this.recursionMetrics = new RecursionMetrics(node);
    // One task for whichever query logs are open when the node stops, after its last reply.
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "close-query-log",
        () -> {
          List<QueryLog> open = new ArrayList<>(retiring);
          Built last = current;
          if (last != null && last.plan().queryLog() != null) {
            open.add(last.plan().queryLog());
          }
          return CompletableFuture.allOf(open.stream().map(l -> l.stop().toCompletableFuture())
              .toArray(CompletableFuture[]::new)).thenApply(v -> Done.getInstance());
        });
  }

  /** The node's kept DNSSEC denials, which the cluster shares. */
  DenialProofs denials() {
    return denials;
  }

  /**
   * Forgets what the resolving groups learnt at or below {@code name} (delegations, name-server
   * addresses; for the root also every server's round-trip record); returns how many entries.
   */
  int flushRecursion(org.xbill.DNS.Name name) {
    int removed = 0;
    for (RecursiveUpstream r : resolvers.values()) {
      removed += r.flush(name);
    }
    return removed;
  }

  /** The plan queries are answered by. */
  Built current() {
    return current;
  }

  /**
   * The node's first plan, from the local data and policy already read (a bad file stopped the
   * start before any socket was bound).
   */
  Built first(ShoalConfig config, LocalData local, ResponsePolicy policy, LoopDetector loops) {
    QueryLog queryLog;
    try {
      queryLog = QueryLog.start(config.queryLog(), queryLogMetrics);
    } catch (UncheckedIOException e) {
      throw new StartupException("shoal.log.dnstap.file: " + e.getMessage());
    }
    Built built = assemble(config, null, local, policy, queryLog, loops);
    current = built;
    // Files loaded at start (a bad line stopped it before any bind); from here on they are
    // watched, as a reload's new ones are from activate.
    if (local != null) {
      local.watch(system, reloads);
    }
    if (policy != null) {
      policy.watch(system, reloads);
    }
    return built;
  }

  /**
   * The plan {@code config} asks for, next to the current one, which goes on answering until
   * {@link #activate}. Files are read and opened here.
   *
   * @throws InvalidConfigException naming the key whose value or file cannot be used; nothing was
   *     changed then (a new query log, the one part that writes, is started after every file was
   *     read)
   */
  Built build(ShoalConfig config) {
    Built previous = current;
    SelfUpstreamCheck.refuse(config);
    ShoalConfig before = previous.config();
    // Files whose settings stay are kept as read, unless one changed since or its last reading was
    // refused: then they are read again here, and a file that still does not load refuses the reload.
    LocalData kept = previous.plan().local();
    LocalData local = before.local().equals(config.local()) && (kept == null || !kept.needsReading())
        ? kept : LocalData.load(config.local());
    ResponsePolicy keptPolicy = previous.plan().policy();
    ResponsePolicy policy = before.policy().equals(config.policy()) && (keptPolicy == null || !keptPolicy.needsReading())
        ? keptPolicy : ResponsePolicy.load(config.policy(), policyMetrics);
    QueryLog queryLog = before.queryLog().equals(config.queryLog())
        ? previous.plan().queryLog() : startAgain(before.queryLog(), config.queryLog());
    boolean sameUpstreams = before.upstreams().equals(config.upstreams()) && before.profiles().equals(config.profiles());
    LoopDetector loops = sameUpstreams ? previous.plan().loops() : new LoopDetector(config, node);
    return assemble(config, previous, local, policy, queryLog, loops);
  }

  /**
   * Makes {@code next} current: starts watching its files and probing its upstreams for loops,
   * and retires what it replaced (file watches stopped, upstream groups no longer probed, a
   * query log drained and closed once the queries that hold it have been written).
   */
  void activate(Built next) {
    Built old = current;
    current = next;
    QueryPlan n = next.plan();
    QueryPlan o = old.plan();
    if (n.local() != null && n.local() != o.local()) {
      n.local().watch(system, reloads);
    }
    if (n.policy() != null && n.policy() != o.policy()) {
      n.policy().watch(system, reloads);
    }
    if (n.loops() != o.loops()) {
      n.loops().start(sockets, system);
    }
    // Each plan validates through upstreams of its own, checked afresh.
    ValidatingUpstream.checkUpstreams(n.profiles().upstreams());
    if (o.local() != null && o.local() != n.local()) {
      o.local().close();
    }
    if (o.policy() != null && o.policy() != n.policy()) {
      o.policy().close();
    }
    for (Map.Entry<UpstreamGroupSettings, UpstreamGroup> g : old.groups().entrySet()) {
      if (next.groups().get(g.getKey()) != g.getValue()) {
        g.getValue().retire();
      }
    }
    QueryLog oldLog = o.queryLog();
    if (oldLog != null && oldLog != n.queryLog()) {
      // Queries in flight log their replies to the log they started with: it closes once the
      // longest of them has had its answer or its SERVFAIL.
      retiring.add(oldLog);
      system.scheduler().scheduleOnce(o.streamGuard(), () -> {
        if (retiring.remove(oldLog)) {
          oldLog.stop();
        }
      }, system.executionContext());
    }
  }

  /**
   * A reload changed the query log settings: a new writer. A dnstap file the new settings name
   * again is rotated: the stream written so far is kept, complete, as {@code FILE.1} (the old
   * writer finishes it there) and a new stream starts in {@code FILE}.
   */
  private QueryLog startAgain(QueryLogSettings before, QueryLogSettings after) {
    Path file = after.dnstapFile();
    Path rotated = null;
    try {
      if (file != null && file.equals(before.dnstapFile()) && Files.exists(file)) {
        rotated = file.resolveSibling(file.getFileName() + ".1");
        Files.move(file, rotated, StandardCopyOption.REPLACE_EXISTING);
      }
      return QueryLog.start(after, queryLogMetrics);
    } catch (IOException | UncheckedIOException e) {
      if (rotated != null) {
        try {
          Files.move(rotated, file, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException ignored) {
          // The old writer goes on in the rotated file: nothing is lost, only renamed.
        }
      }
      throw new InvalidConfigException("shoal.log.dnstap.file", "cannot write " + file + ": " + e.getMessage());
    }
  }

  /** The suffixes of the profiles that use stub group {@code group}: the zones its servers are asked for. */
  private static List<org.xbill.DNS.Name> stubZones(ShoalConfig config, UpstreamGroupSettings group) {
    List<org.xbill.DNS.Name> zones = new ArrayList<>();
    if (group.mode() != UpstreamGroupSettings.Mode.STUB) {
      return zones;
    }
    for (ProfileSettings p : config.profiles()) {
      if (p.upstreams().equals(group.name())) {
        for (String suffix : p.match()) {
          try {
            zones.add(org.xbill.DNS.Name.fromString(suffix, org.xbill.DNS.Name.root).canonicalize());
          } catch (org.xbill.DNS.TextParseException e) {
            throw new InvalidConfigException("shoal.profiles." + p.name() + ".match", e.getMessage());
          }
        }
      }
    }
    return List.copyOf(zones);
  }

  private Built assemble(ShoalConfig config, Built previous, LocalData local, ResponsePolicy policy,
      QueryLog queryLog, LoopDetector loops) {
    Map<UpstreamGroupSettings, UpstreamGroup> groups = new HashMap<>();
    Map<String, Upstream> upstreams = new HashMap<>();
    Duration longest = Duration.ZERO;
    // Kept denials stay with a group whose servers and DNSSEC settings a reload keeps.
    Set<String> keepDenials = new HashSet<>();
    Map<List<Object>, RecursiveUpstream> resolving = new HashMap<>();
    for (UpstreamGroupSettings group : config.upstreams().values()) {
      if (group.mode() != UpstreamGroupSettings.Mode.FORWARD) {
        // Resolves itself: its own state, no upstream servers to probe for health.
        List<org.xbill.DNS.Name> stubZones = stubZones(config, group);
        // Whether its answers are validated decides where its steps run: part of what it is.
        boolean validated = config.dnssec().mode() != DnssecSettings.Mode.OFF;
        List<Object> key = List.of(group, stubZones, validated);
        RecursiveUpstream r = resolvers.get(key);
        if (r == null) {
          r = new RecursiveUpstream(group, stubZones, sockets, recursionMetrics,
              ValidatingUpstream.upstreamSteps(config.dnssec()));
          r.start();
        }
        resolving.put(key, r);
        Upstream logged = queryLog == null ? r : queryLog.forwarder(r);
        upstreams.put(group.name(), ValidatingUpstream.wrap(config.dnssec(),
            loops.guard(group.name(), logged), clock, dnssecMetrics, group.name(), denials, group.deadline()));
        longest = group.deadline().compareTo(longest) > 0 ? group.deadline() : longest;
        continue;
      }
      UpstreamGroup exchanges = previous == null ? null : previous.groups().get(group);
      if (exchanges != null && previous.config().dnssec().equals(config.dnssec())) {
        keepDenials.add(group.name());
      }
      if (exchanges == null) {
        exchanges = new UpstreamGroup(group, sockets, dot, metrics);
      }
      groups.put(group, exchanges);
      // Validation sits between the exchange and the fill: the cache keeps what it decided.
      // The forwarder log sees the exchanges themselves, DNSSEC key fetches included.
      Upstream logged = queryLog == null ? exchanges : queryLog.forwarder(exchanges);
      upstreams.put(group.name(), ValidatingUpstream.wrap(config.dnssec(),
          loops.guard(group.name(), logged), clock, dnssecMetrics, group.name(), denials, group.deadline()));
      longest = group.deadline().compareTo(longest) > 0 ? group.deadline() : longest;
    }
    if (previous != null) {
      denials.retainOnly(keepDenials);
    }
    resolvers.keySet().retainAll(resolving.keySet());
    resolvers.putAll(resolving);
    Map<String, Profile> bySuffix = new HashMap<>();
    for (ProfileSettings p : config.profiles()) {
      CacheSettings c = config.cache(p.cache());
      Profile profile = new Profile(p.name(), caches.get(c.name()), cacheMetrics.get(c.name()),
          new TtlRules(c), upstreams.get(p.upstreams()));
      for (String suffix : p.match()) {
        bySuffix.put(suffix, profile);
      }
    }
    QueryPlan plan = new QueryPlan(new ProfileTable(bySuffix), new AccessControl(config.accessControl(), metrics),
        new MissBudget(config.missBudget()), config.replies(), local, policy, queryLog, loops, config.serveStale(), config.prefetch(),
        longest.plus(config.cluster().ownerTimeout()).plusSeconds(1));
    return new Built(config, plan, Map.copyOf(groups));
  }
}

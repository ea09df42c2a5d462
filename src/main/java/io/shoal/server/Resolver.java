package io.shoal.server;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorRef;
import akka.actor.typed.SupervisorStrategy;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CacheSettings;
import io.shoal.cache.lmdb.CacheInUseException;
import io.shoal.cache.lmdb.CacheShard;
import io.shoal.cache.lmdb.LmdbAnswerCache;
import io.shoal.cache.memory.MemoryAnswerCache;
import io.shoal.cluster.NearCache;
import io.shoal.cluster.NodeStatus;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.ShoalConfig;
import io.shoal.config.TlsSettings;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.IngressWorker;
import io.shoal.ingress.QueryPlan;
import io.shoal.ingress.Prefetch;
import io.shoal.local.LocalData;
import io.shoal.loop.LoopDetector;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.ServerMetrics;
import io.shoal.policy.ResponsePolicy;
import io.shoal.transport.tls.DotUpstreams;
import io.shoal.upstream.DotExchanges;
import io.shoal.upstream.UpstreamSelector;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The resolving part of a node, built in its guardian: upstream groups, caches, profiles and the
 * workers behind the ingress; {@code caches} lists everything that must be closed (and flushed)
 * at the end, the near cache included.
 */
record Resolver(Ingress ingress, List<AnswerCache> caches, OwnerDirectory owners, QueryPlans plans) {
  /** The cache label of the near cache (copies of answers other cluster nodes own). */
  private static final String NEAR_CACHE = "near";

  /**
   * Builds it in the guardian {@code ctx}; a cache that cannot open throws {@link StartupException}.
   * {@code status}'s flush catch-up holds the caches back in cluster mode.
   */
  static Resolver build(
      ActorContext<Void> ctx, ShoalConfig config, LongSupplier clock, ServerMetrics metrics, String node,
      UpstreamSelector upstreamSockets, LoopDetector loops, CacheShard.Opener lmdbStores, LocalData local,
      ResponsePolicy responsePolicy, NodeStatus status) {
    Map<String, AnswerCache> caches = new LinkedHashMap<>();
    Map<String, CacheMetrics> cacheMetrics = new HashMap<>();
    for (CacheSettings c : config.caches().values()) {
      CacheMetrics m = new CacheMetrics(c.name(), c.backend().configName(), node);
      cacheMetrics.put(c.name(), m);
      caches.put(c.name(), openCache(ctx, c, m, lmdbStores));
    }
    QueryPlans plans = new QueryPlans(ctx.getSystem(), caches, cacheMetrics, clock, metrics, node, upstreamSockets,
        dotUpstreams(ctx, metrics, upstreamSockets, config.tls().provider()));
    QueryPlan plan = plans.first(config, local, responsePolicy, loops).plan();
    List<ActorRef<IngressWorker.Command>> workers = new ArrayList<>();
    AtomicInteger[] pending = new AtomicInteger[config.workers()];
    OwnerDirectory owners = new OwnerDirectory();
    List<AnswerCache> cacheList = new ArrayList<>(caches.values());
    long nearEntries = config.cluster().nearCacheMaxEntries();
    if (config.cluster().enabled()) {
      NearCache near = null;
      CacheMetrics nearMetrics = null;
      if (nearEntries > 0) {
        nearMetrics = new CacheMetrics(NEAR_CACHE, "memory", node);
        near = new NearCache(NEAR_CACHE, nearEntries, config.cluster().nearCacheMaxBytes(), nearMetrics, clock);
        // Listed with the caches so flushes reach it; not in the map, where profiles pick caches by name.
        cacheList.add(near);
      }
      owners = new OwnerDirectory(upstreamSockets, near, nearMetrics, config.cluster().warmJoin().previousOwnerWindow(),
          config.cluster().lookupsFromListeners(), status);
    }
    Duration ownerTimeout = config.cluster().ownerTimeout();
    // Always there, so a reload can turn it on; the plan says whether it claims anything.
    Prefetch prefetch = new Prefetch(config.prefetch(), config.workers() * config.maxPendingPerWorker());
    for (int i = 0; i < config.workers(); i++) {
      pending[i] = new AtomicInteger();
      workers.add(ctx.spawn(
          Behaviors.supervise(IngressWorker.create(plan.profiles(), config.fill(), clock, pending[i], metrics, owners,
                  ownerTimeout, plan.serveStale(), prefetch))
              .onFailure(SupervisorStrategy.restart().withLoggingEnabled(false)),
          "ingress-" + i));
    }
    Ingress ingress = new Ingress(plan, clock, workers, pending, config.maxPendingPerWorker(), metrics, prefetch, owners,
        ownerTimeout);
    return new Resolver(ingress, List.copyOf(cacheList), owners, plans);
  }

  /**
   * The DoT upstream connections, opened when a group first asks a tls:// server (at start, or
   * after a reload that added one), closed with the upstream sockets.
   */
  private static DotExchanges dotUpstreams(ActorContext<Void> ctx, ServerMetrics metrics,
      UpstreamSelector upstreamSockets, TlsSettings.Provider provider) {
    DotUpstreams dot = new DotUpstreams(ctx.getSystem(), metrics, upstreamSockets::newQueryId, provider);
    CoordinatedShutdown.get(ctx.getSystem()).addTask(CoordinatedShutdown.PhaseServiceStop(), "close-dot-upstreams",
        () -> {
          dot.close();
          return CompletableFuture.completedFuture(Done.getInstance());
        });
    return dot;
  }

  private static AnswerCache openCache(
      ActorContext<Void> ctx, CacheSettings c, CacheMetrics metrics, CacheShard.Opener lmdbStores) {
    return switch (c.backend()) {
      case MEMORY -> new MemoryAnswerCache(c.name(), c.maxEntries(), c.whenFull(), metrics);
      case LMDB -> {
        try {
          yield LmdbAnswerCache.open(ctx, c, metrics, lmdbStores);
        } catch (CacheInUseException e) {
          throw new StartupException("shoal.caches." + c.name() + ".lmdb.path: " + e.getMessage()
              + "; a cache directory serves one cache of one node");
        } catch (UncheckedIOException e) {
          throw new StartupException("shoal.caches." + c.name() + ".lmdb.path: cannot use "
              + c.lmdb().path() + " (" + e.getCause() + ")");
        }
      }
    };
  }
}

package io.shoal.server;

import akka.actor.typed.ActorSystem;
import io.shoal.admin.AdminEndpoint;
import io.shoal.admin.AdminToken;
import io.shoal.admin.CacheTransfer;
import io.shoal.cache.AnswerCache;
import io.shoal.cluster.ClusterNode;
import io.shoal.config.ShoalConfig;
import io.shoal.metrics.CacheLoadMetrics;
import io.shoal.reload.ConfigReload;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's admin HTTP endpoint as {@link ShoalServer} starts it: the token file written before
 * any DNS socket binds (and removed if the node does not start), and the endpoint with its flush,
 * dump and load, and reload.
 */
final class NodeAdmin {
  /** The server's logger: these lines are the server's start and the admin flush it serves. */
  private static final Logger log = LoggerFactory.getLogger(ShoalServer.class);

  private NodeAdmin() {
  }

  /**
   * Writes the token file of the admin endpoint before any DNS socket binds, after checking that
   * a fixed port is free; null (nothing written) when the endpoint is off, or its port is 0 and
   * its file is named for the port (known, and the file written, once the port is bound).
   */
  static Path writeEarlyToken(ShoalConfig config, AdminToken adminToken) {
    if (!(config.admin().enabled() && config.admin().tokenFileBeforeBinding() != null)) {
      return null;
    }
    // A node already on this admin port keeps its token file: this one would not start anyway.
    try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
      probe.bind(new InetSocketAddress(config.admin().host(), config.admin().port()));
    } catch (IOException e) {
      throw new StartupException("cannot listen on admin HTTP " + config.admin().host() + ":" + config.admin().port()
          + ": " + e.getMessage());
    }
    Path earlyToken = config.admin().tokenFileBeforeBinding();
    try {
      adminToken.writeTo(earlyToken);
    } catch (IOException e) {
      throw new StartupException("shoal.admin.token_file: cannot write " + earlyToken + ": " + e.getMessage());
    }
    return earlyToken;
  }

  /** Removes the token file of a node that did not start, so no file names a token nothing accepts. */
  static void forget(Path tokenFile) {
    if (tokenFile != null) {
      try {
        java.nio.file.Files.deleteIfExists(tokenFile);
      } catch (IOException e) {
        log.warn("cannot remove {}: {}", tokenFile, e.getMessage());
      }
    }
  }

  /**
   * Flushes here at once (to report a count) and, in cluster mode, adds the flush to the
   * cluster's record, which every node applies (now, or when it is back if it is away).
   */
  static InetSocketAddress start(
      ActorSystem<Void> system, ShoalConfig config, Resolver resolver, ClusterNode clusterNode, LongSupplier clock,
      ConfigReload reload, AdminToken token) throws IOException {
    // Dumps cover the configured caches: in a cluster this node's share, not its near copies of others'.
    List<AnswerCache> own = resolver.caches().stream().filter(c -> config.caches().containsKey(c.name())).toList();
    CacheLoadMetrics loadMetrics = new CacheLoadMetrics(config.cluster().enabled() ? config.cluster().nodeLabel() : null);
    CacheTransfer transfer = new CacheTransfer(own, () -> resolver.ingress().plan().profiles(), clock, loadMetrics);
    return AdminEndpoint.start(system, config.admin(), (name, qtype) -> {
      CompletableFuture<Integer> removed = CompletableFuture.completedFuture(0);
      for (AnswerCache c : resolver.caches()) {
        removed = removed.thenCombine(c.flushName(name, qtype), Integer::sum);
      }
      // What the resolving groups learnt of the tree goes too, so a changed delegation is walked again.
      flushRecursion(resolver, name);
      CompletionStage<Boolean> everyNode = clusterNode == null
          ? CompletableFuture.completedFuture(null)
          : clusterNode.recordFlush(name, qtype);
      return removed.thenCombine(everyNode, (n, all) -> new AdminEndpoint.Flushed(n, clusterNode != null, all));
    }, transfer, () -> reload.reload("shoal reload"), token);
  }

  /** Forgets what {@code resolver}'s resolving groups learnt at or below {@code name}, on this node. */
  static void flushRecursion(Resolver resolver, String name) {
    try {
      resolver.plans().flushRecursion(org.xbill.DNS.Name.fromString(name, org.xbill.DNS.Name.root).canonicalize());
    } catch (org.xbill.DNS.TextParseException e) {
      log.debug("flush of {}: not a name the recursion knows", name);
    }
  }
}

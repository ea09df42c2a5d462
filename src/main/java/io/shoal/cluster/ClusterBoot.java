package io.shoal.cluster;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.japi.function.Function;
import akka.management.cluster.bootstrap.ClusterBootstrap;
import akka.management.javadsl.AkkaManagement;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.config.ClusterSettings;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Turns {@code shoal.cluster} into Akka settings (cluster provider, Artery, Split Brain
 * Resolver, Management, Bootstrap and discovery) and starts Bootstrap.
 */
public final class ClusterBoot {
  private ClusterBoot() {}

  /**
   * Akka config to layer over the node's config when cluster mode is on.
   *
   * @param managementPort the port the node's {@link ManagementPort} is bound to (the configured
   *     one, or the one the OS gave for port 0)
   */
  public static Config akkaConfig(ClusterSettings c, int managementPort) {
    Map<String, Object> m = new HashMap<>();
    m.put("akka.actor.provider", "cluster");
    m.put("akka.actor.serialization-bindings.\"io.shoal.cluster.CborSerializable\"", "jackson-cbor");
    m.put("akka.remote.artery.canonical.hostname", c.remotingHost());
    m.put("akka.remote.artery.canonical.port", c.remotingPort());
    m.put("akka.cluster.downing-provider-class", "akka.cluster.sbr.SplitBrainResolverProvider");
    m.put("akka.cluster.split-brain-resolver.active-strategy", "keep-majority");
    m.put("akka.cluster.shutdown-after-unsuccessful-join-seed-nodes", "120s");
    m.put("akka.coordinated-shutdown.exit-jvm", "off");
    // The node's own shutdown makes this system leave the cluster (ShoalServer's cluster-leave
    // task); a JVM hook of its own would race with that.
    m.put("akka.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    m.put("akka.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    // Membership's timers run at seconds (heartbeats, gossip) or 100 ms (flush notification): a
    // 50 ms tick serves them, where Akka's 10 ms woke this system's scheduler thread 100 times a
    // second for nothing, about 7 ms of CPU a second on an idle node (a sixth of a 0.25 CPU quota went
    // to an idle cluster node's background). The cluster's own tick matches it: at a shorter one
    // Akka Cluster starts a scheduler thread of its own.
    m.put("akka.scheduler.tick-duration", "50ms");
    m.put("akka.cluster.scheduler.tick-duration", "50ms");
    // Receptionist changes (a node's owner endpoint listed, or withdrawn as it stops) are written to
    // every node at once rather than gossiped within seconds: a stopping node's peers must drop it
    // from their rings before it stops reading (ClusterNode.handOver).
    m.put("akka.cluster.typed.receptionist.write-consistency", "all");
    // A flush written to every node reaches its caches within this (Akka's default is 500 ms).
    m.put("akka.cluster.distributed-data.notify-subscribers-interval", "100ms");
    // Where the management port is, as the node tells other nodes (its bootstrap contact point):
    // the port itself is bound by the node (ManagementPort), not by this system.
    m.put("akka.management.http.hostname", c.managementHost());
    m.put("akka.management.http.port", managementPort);
    // /ready and /alive are the node's (ManagementPort), answered while this system restarts.
    m.put("akka.management.http.routes.health-checks", "");
    String boot = "akka.management.cluster.bootstrap.contact-point-discovery.";
    m.put(boot + "service-name", c.serviceName());
    m.put(boot + "required-contact-point-nr", c.requiredContactPoints());
    if (c.discovery() == ClusterSettings.Discovery.CONFIG) {
      m.put(boot + "discovery-method", "config");
      // A static list is known up front: no need to wait for it to settle.
      m.put(boot + "stable-margin", "1s");
      m.put(boot + "interval", "500ms");
      m.put("akka.management.cluster.bootstrap.contact-point.probe-interval", "500ms");
      // Listed nodes may share a host and differ by port: keep every listed endpoint.
      m.put("akka.management.cluster.bootstrap.contact-point.filter-on-fallback-port", false);
      List<Map<String, Object>> endpoints = new ArrayList<>();
      for (InetSocketAddress a : c.contactPoints()) {
        endpoints.add(Map.of("host", a.getHostString(), "port", a.getPort()));
      }
      m.put("akka.discovery.config.services." + c.serviceName() + ".endpoints", endpoints);
    } else {
      m.put(boot + "discovery-method", "kubernetes-api");
      m.put(boot + "port-name", "management");
      m.put("akka.discovery.kubernetes-api.pod-label-selector", c.podLabelSelector());
    }
    return ConfigFactory.parseMap(m);
  }

  /**
   * Fails with a message an operator can act on when kubernetes-api discovery cannot work
   * because the pod has no service account token (Akka's own error names the CA file instead).
   */
  public static void requireServiceAccount(Config akkaConfig) {
    String k8s = "akka.discovery.kubernetes-api.";
    for (String file : new String[] {"api-token-path", "api-ca-path"}) {
      Path path = Path.of(akkaConfig.getString(k8s + file));
      if (!Files.isReadable(path)) {
        throw new IllegalStateException("shoal.cluster.discovery.method = kubernetes-api needs the pod's service"
            + " account token and CA certificate, but " + path + " is missing: this pod has no service account"
            + " token mounted (give the pod a serviceAccountName and do not set automountServiceAccountToken: false;"
            + " see docs/kubernetes.md), or use discovery.method = config outside Kubernetes");
      }
    }
  }

  /**
   * Starts Cluster Bootstrap; returns Akka Management's routes (bootstrap's contact point,
   * /cluster/members) for the node's {@link ManagementPort} to serve. Taking the routes is what
   * tells bootstrap its own contact point, so it comes first.
   */
  public static Function<HttpRequest, CompletionStage<HttpResponse>> start(ActorSystem<?> system) {
    akka.actor.ActorSystem classic = Adapter.toClassic(system);
    Function<HttpRequest, CompletionStage<HttpResponse>> routes = AkkaManagement.get(classic).getRoutes().handler(classic);
    ClusterBootstrap.get(classic).start();
    return routes;
  }
}

package io.shoal.study.server;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigValueFactory;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.ScenarioException;
import io.shoal.study.scenario.Transport;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The configuration file a shoal member runs with: built from the recipe and the member's deltas,
 * rendered as HOCON, and checked the way {@code shoal serve} will check it.
 */
public final class ShoalMemberConfig {

  private ShoalMemberConfig() {
  }

  /**
   * The configuration a shoal member runs with: the recipe's settings with the member's deltas
   * merged over them, listening, serving metrics and its admin endpoint on the given ports, knotd
   * as its only upstream, and in a cluster with the nodes of {@code placement} (null: no cluster).
   */
  public static Config memberConfig(Recipe r, Member m, int port, int metricsPort, int adminPort,
      InetSocketAddress upstream, Path data, ClusterPlacement placement) {
    String addr = "127.0.0.1:" + port;
    Config base = ConfigFactory.empty()
        .withValue("shoal.listen.udp", ConfigValueFactory.fromAnyRef(addr))
        .withValue("shoal.listen.tcp", ConfigValueFactory.fromAnyRef(addr))
        // off unless the member says otherwise: most recipes' zone is unsigned (see Member.validates)
        .withValue("shoal.dnssec.validation", ConfigValueFactory.fromAnyRef("off"))
        .withValue("shoal.ingress.workers", ConfigValueFactory.fromAnyRef(r.ingressWorkers()))
        .withValue("shoal.ingress.fill", ConfigValueFactory.fromAnyRef(r.fill()))
        .withValue("shoal.upstreams.default.servers", ConfigValueFactory.fromIterable(
            List.of(upstream.getAddress().getHostAddress() + ":" + upstream.getPort())))
        .withValue("shoal.caches.answers.backend", ConfigValueFactory.fromAnyRef("memory"))
        .withValue("shoal.caches.answers.max_entries", ConfigValueFactory.fromAnyRef(r.maxEntries()))
        .withValue("shoal.caches.answers.when_full", ConfigValueFactory.fromAnyRef(r.whenFull()))
        .withValue("shoal.caches.answers.lmdb.path", ConfigValueFactory.fromAnyRef(data.toString()))
        .withValue("shoal.caches.answers.lmdb.shard_count", ConfigValueFactory.fromAnyRef(r.shardCount()))
        .withValue("shoal.caches.answers.lmdb.map_size", ConfigValueFactory.fromAnyRef(r.mapSizeBytes()))
        .withValue("shoal.caches.answers.lmdb.sync_interval",
            ConfigValueFactory.fromAnyRef(r.syncInterval().toMillis() + "ms"))
        .withValue("shoal.metrics.enabled", ConfigValueFactory.fromAnyRef(true))
        .withValue("shoal.metrics.prometheus.host", ConfigValueFactory.fromAnyRef("127.0.0.1"))
        .withValue("shoal.metrics.prometheus.port", ConfigValueFactory.fromAnyRef(metricsPort))
        // A port of its own: the default 8559 would clash between nodes, and with any shoal on the host.
        .withValue("shoal.admin.host", ConfigValueFactory.fromAnyRef("127.0.0.1"))
        .withValue("shoal.admin.port", ConfigValueFactory.fromAnyRef(adminPort));
    if (placement != null) {
      base = base
          .withValue("shoal.cluster.enabled", ConfigValueFactory.fromAnyRef(true))
          .withValue("shoal.cluster.node_name", ConfigValueFactory.fromAnyRef(placement.nodeName()))
          .withValue("shoal.cluster.remoting.host", ConfigValueFactory.fromAnyRef("127.0.0.1"))
          .withValue("shoal.cluster.remoting.port", ConfigValueFactory.fromAnyRef(placement.remotingPort()))
          .withValue("shoal.cluster.management.host", ConfigValueFactory.fromAnyRef("127.0.0.1"))
          .withValue("shoal.cluster.management.port", ConfigValueFactory.fromAnyRef(placement.managementPort()))
          .withValue("shoal.cluster.discovery.method", ConfigValueFactory.fromAnyRef("config"))
          .withValue("shoal.cluster.discovery.contact_points",
              ConfigValueFactory.fromIterable(placement.contactPoints()))
          // every node must see every other before the cluster forms: no member measured half-formed
          .withValue("shoal.cluster.discovery.required_contact_points",
              ConfigValueFactory.fromAnyRef(placement.managementPorts().size()));
    }
    return m.config().atPath("shoal").withFallback(base);
  }

  /**
   * {@code c} with a DoT or DoH listener on {@code encryptedPort} presenting {@code certificate}
   * for a member queried over one; {@code c} unchanged for UDP and TCP, which the DNS port serves.
   */
  static Config withEncryptedListener(Config c, Transport transport, int encryptedPort,
      StudyCertificate certificate) {
    if (!transport.encrypted()) {
      return c;
    }
    return c
        .withValue(transport == Transport.DOT ? "shoal.listen.tls" : "shoal.listen.https",
            ConfigValueFactory.fromAnyRef("127.0.0.1:" + encryptedPort))
        .withValue("shoal.tls.certificate", ConfigValueFactory.fromAnyRef(certificate.certificate().toString()))
        .withValue("shoal.tls.private_key", ConfigValueFactory.fromAnyRef(certificate.privateKey().toString()));
  }

  /** The {@code shoal} block of {@code c} as the HOCON file the member runs with. */
  public static String render(Config c) {
    // Rendering the whole object (not just the shoal block) keeps the outer "shoal { }": HOCON
    // renders a root object without braces.
    return c.withOnlyPath("shoal").root().render(
        ConfigRenderOptions.defaults().setOriginComments(false).setComments(false).setJson(false)) + "\n";
  }

  /**
   * Checks a member's configuration the way {@code shoal serve} will, before anything starts, so
   * a typo in a scenario fails in a second rather than after the members before it ran.
   */
  public static ShoalConfig validate(Member m, String rendered) {
    try {
      Config full = ConfigFactory.parseString(rendered)
          .withFallback(ConfigFactory.parseResources(ShoalMemberConfig.class.getClassLoader(), "application.conf"))
          .resolve();
      return ShoalConfig.from(full);
    } catch (InvalidConfigException | ConfigException e) {
      throw new ScenarioException("member '" + m.name() + "': invalid shoal configuration: " + e.getMessage());
    }
  }

  /** Validates a member with placeholder ports and paths; used to check a scenario before running it. */
  public static void check(Recipe r, Member m) {
    ClusterPlacement placement = null;
    if (m.cluster()) {
      List<Integer> management = new ArrayList<>();
      for (int i = 0; i < m.nodes(); i++) {
        management.add(1100 + i);
      }
      placement = new ClusterPlacement("node-0", 1200, management.get(0), management);
    }
    validate(m, render(memberConfig(r, m, 1053, 1054, 1056, new InetSocketAddress("127.0.0.1", 1055),
        Path.of("data"), placement)));
   }
}

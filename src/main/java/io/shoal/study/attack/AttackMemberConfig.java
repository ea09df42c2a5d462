package io.shoal.study.attack;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.shoal.study.scenario.AttackPlan;
import io.shoal.study.scenario.Member;
import io.shoal.study.server.StudyCertificate;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The configuration a member runs with in the robustness phases: its own, plus the hostile zone's
 * profile (shoal) or forward-zone (unbound), and the DoT and DoH listeners the encrypted phases use.
 */
public final class AttackMemberConfig {
  /** Name of the hostile profile and its upstream group in the member's configuration. */
  static final String HOSTILE = "hostile";

  private AttackMemberConfig() {
  }

  /**
   * A shoal member's configuration deltas with a DoT listener on {@code dotPort} and a DoH one on
   * {@code dohPort}, both presenting {@code certificate}; its UDP and TCP listeners stay. Each has
   * the connection cap and deadlines of the member's other stream listeners.
   */
  public static Config withEncryptedListeners(Config memberDeltas, int dotPort, int dohPort,
      StudyCertificate certificate) {
    return memberDeltas
        .withValue("listen.tls", ConfigValueFactory.fromAnyRef("127.0.0.1:" + dotPort))
        .withValue("listen.https", ConfigValueFactory.fromAnyRef("127.0.0.1:" + dohPort))
        .withValue("tls.certificate", ConfigValueFactory.fromAnyRef(certificate.certificate().toString()))
        .withValue("tls.private_key", ConfigValueFactory.fromAnyRef(certificate.privateKey().toString()));
  }

  /**
   * An unbound member's configuration with DoT on {@code dotPort} and DoH (HTTP/2 at /dns-query,
   * its default endpoint) on {@code dohPort}, both presenting {@code certificate}: two interface
   * lines that tls-port and https-port mark as TLS, added to the member's extra lines.
   */
  public static Config withEncryptedInterfaces(Config memberConfig, int dotPort, int dohPort,
      StudyCertificate certificate) {
    List<String> extra = new ArrayList<>(memberConfig.hasPath("extra") ? memberConfig.getStringList("extra")
        : List.of());
    extra.addAll(List.of("interface: 127.0.0.1@" + dotPort, "interface: 127.0.0.1@" + dohPort,
        "tls-port: " + dotPort, "https-port: " + dohPort,
        "tls-service-key: \"" + certificate.privateKey() + "\"",
        "tls-service-pem: \"" + certificate.certificate() + "\""));
    return memberConfig.withValue("extra", ConfigValueFactory.fromIterable(extra));
  }

  /**
   * The member's configuration deltas with the hostile profile added: names under the plan's zone
   * go to {@code hostile}, with the plan's timeout.
   */
  public static Config withHostileProfile(Config memberDeltas, AttackPlan plan, InetSocketAddress hostile) {
    return ConfigFactory.empty()
        .withValue("upstreams." + HOSTILE + ".servers",
            ConfigValueFactory.fromIterable(List.of("127.0.0.1:" + hostile.getPort())))
        .withValue("upstreams." + HOSTILE + ".timeout",
            ConfigValueFactory.fromAnyRef(plan.hostileTimeout().toMillis() + "ms"))
        .withValue("profiles." + HOSTILE + ".match", ConfigValueFactory.fromIterable(List.of(plan.hostileZone())))
        .withValue("profiles." + HOSTILE + ".cache", ConfigValueFactory.fromAnyRef("answers"))
        .withValue("profiles." + HOSTILE + ".upstreams", ConfigValueFactory.fromAnyRef(HOSTILE))
        .withFallback(memberDeltas);
  }

  /**
   * The configuration of an unbound member with the plan's hostile zone forwarded to {@code hostile}:
   * the equivalent of shoal's hostile profile (unbound has no per-zone upstream timeout; its own
   * retry and timeout logic applies).
   */
  public static Config withHostileForward(Config memberConfig, AttackPlan plan, InetSocketAddress hostile) {
    return memberConfig
        .withValue(Member.UNBOUND_SIDE_ZONE, ConfigValueFactory.fromAnyRef(plan.hostileZone()))
        .withValue(Member.UNBOUND_SIDE_ADDR, ConfigValueFactory.fromAnyRef(
            hostile.getAddress().getHostAddress() + "@" + hostile.getPort()));
  }
}

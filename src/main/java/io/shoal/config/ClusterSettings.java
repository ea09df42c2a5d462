package io.shoal.config;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Cluster mode ({@code shoal.cluster}): Akka Cluster with Management, Bootstrap and discovery. */
public record ClusterSettings(
    boolean enabled,
    String nodeName,
    String remotingHost,
    int remotingPort,
    String managementHost,
    int managementPort,
    Discovery discovery,
    String serviceName,
    List<InetSocketAddress> contactPoints,
    int requiredContactPoints,
    String podLabelSelector,
    Duration ownerTimeout,
    boolean lookupsFromListeners,
    Duration joinWait,
    long nearCacheMaxEntries,
    long nearCacheMaxBytes,
    WarmJoinSettings warmJoin) {

  /** How a node finds the others. */
  public enum Discovery {
    /** A static list of management endpoints: a laptop, tests. */
    CONFIG("config"),
    /** Pods by label through the Kubernetes API. */
    KUBERNETES_API("kubernetes-api");

    private final String configName;

    Discovery(String configName) {
      this.configName = configName;
    }

    public String configName() {
      return configName;
    }
  }

  /** The metric label of this node: node_name, or remoting host:port when that is empty. */
  public String nodeLabel() {
    return nodeName.isEmpty() ? remotingHost + ":" + remotingPort : nodeName;
  }

  static ClusterSettings from(Section c) {
    c.allowOnly("enabled", "node_name", "remoting", "management", "discovery", "owner_timeout", "lookups_from_listeners", "join_wait",
        "near_cache", "warm_join");
    Section near = c.section("near_cache");
    near.allowOnly("max_entries", "max_bytes");
    Section remoting = c.section("remoting");
    remoting.allowOnly("host", "port");
    Section management = c.section("management");
    management.allowOnly("host", "port");
    Section d = c.section("discovery");
    d.allowOnly("method", "service_name", "contact_points", "required_contact_points", "pod_label_selector");
    List<InetSocketAddress> contactPoints = new ArrayList<>();
    for (String cp : d.strings("contact_points")) {
      contactPoints.add(Addresses.parse(cp, 8558, d.key("contact_points")));
    }
    ClusterSettings.Discovery method =
        d.choice("method", ClusterSettings.Discovery.class, ClusterSettings.Discovery::configName);
    boolean enabled = c.bool("enabled");
    if (enabled && method == ClusterSettings.Discovery.CONFIG && contactPoints.isEmpty()) {
      throw new InvalidConfigException(d.key("contact_points"),
          "discovery.method = config needs the management host:port of at least one node");
    }
    String serviceName = d.string("service_name");
    if (!serviceName.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?")) {
      throw new InvalidConfigException(d.key("service_name"),
          "must be a DNS label (lower-case letters, digits, '-'), got '" + serviceName + "'");
    }
    return new ClusterSettings(
        enabled,
        c.string("node_name"),
        remoting.string("host"),
        (int) remoting.integer("port", 0, 65535),
        management.string("host"),
        (int) management.integer("port", 0, 65535),
        method,
        serviceName,
        List.copyOf(contactPoints),
        (int) d.integer("required_contact_points", 1, 100),
        d.string("pod_label_selector"),
        c.duration("owner_timeout", Duration.ofMillis(10), Duration.ofSeconds(10)),
        c.bool("lookups_from_listeners"),
        c.duration("join_wait", Duration.ZERO, Duration.ofMinutes(10)),
        near.integer("max_entries", 0, 1L << 31),
        near.bytes("max_bytes", 64 * 1024, 1L << 40),
        WarmJoinSettings.from(c.section("warm_join")));
  }
}

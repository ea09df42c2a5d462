package io.shoal.config;

import java.net.InetSocketAddress;
import java.time.Duration;
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
    Duration joinWait,
    long nearCacheMaxEntries) {

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
}

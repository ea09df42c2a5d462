package io.shoal.study.server;

import java.util.List;

/**
 * Where one node of a clustered member sits on loopback: its metric label, its Akka remoting and
 * management ports, and the management ports of every node of the member (the contact points
 * Cluster Bootstrap's config discovery waits for, all of them).
 */
public record ClusterPlacement(String nodeName, int remotingPort, int managementPort, List<Integer> managementPorts) {

  /** The management endpoints as shoal's contact_points list writes them. */
  public List<String> contactPoints() {
    return managementPorts.stream().map(p -> "127.0.0.1:" + p).toList();
  }
}

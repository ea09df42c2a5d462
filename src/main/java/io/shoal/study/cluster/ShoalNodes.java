package io.shoal.study.cluster;

import io.shoal.study.host.LoopbackPort;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.server.ClusterPlacement;
import io.shoal.study.server.ShoalUnderTest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A shoal member that runs as several processes on loopback: independent nodes (each its own
 * cache, each fetching every name itself), or nodes that form one Akka cluster through Cluster
 * Bootstrap with config discovery. Every node has its own DNS, metrics, admin, remoting and
 * management ports and its own directory {@code node-<i>/} under the member's.
 */
public final class ShoalNodes implements AutoCloseable {
  private final Member member;
  private final List<ShoalUnderTest> nodes;
  private final StartedProcesses processes;

  private ShoalNodes(Member member, List<ShoalUnderTest> nodes, StartedProcesses processes) {
    this.member = member;
    this.nodes = nodes;
    this.processes = processes;
  }

  /** Picks every node's ports and writes nothing yet; {@link #start} launches them. */
  public static ShoalNodes of(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p,
      Prerequisites.Tools tools, Path jar) throws IOException {
    List<Integer> management = new ArrayList<>();
    List<Integer> remoting = new ArrayList<>();
    if (m.cluster()) {
      // All management ports are needed up front: each node's contact points list all of them.
      for (int i = 0; i < m.nodes(); i++) {
        management.add(LoopbackPort.pick());
        remoting.add(LoopbackPort.pick());
      }
    }
    List<ShoalUnderTest> nodes = new ArrayList<>();
    for (int i = 0; i < m.nodes(); i++) {
      String name = nodeName(i);
      ClusterPlacement placement = m.cluster()
          ? new ClusterPlacement(name, remoting.get(i), management.get(i), List.copyOf(management)) : null;
      nodes.add(new ShoalUnderTest(m, r, dir.resolve(name), upstream, p, tools, jar, m.name() + "/" + name,
          placement, null));
    }
    return new ShoalNodes(m, List.copyOf(nodes), p);
  }

  /** The directory and metric label of node {@code i}. */
  public static String nodeName(int i) {
    return "node-" + i;
  }

  /**
   * Launches every node at once, waits until each answers a real query, and in cluster mode
   * until the cluster has formed (bounded).
   */
  public void start() throws IOException, StudyException {
    for (ShoalUnderTest n : nodes) {
      n.launch();
    }
    for (ShoalUnderTest n : nodes) {
      n.awaitAnswer();
    }
    if (member.cluster()) {
      ClusterFormation.await(member.name(), nodes, processes, ClusterFormation.LIMIT);
    }
  }

  public List<ShoalUnderTest> nodes() {
    return nodes;
  }

  public ShoalUnderTest node(int i) {
    return nodes.get(i);
  }

  /** The nodes still running (all of them, unless the kill test killed one). */
  List<ShoalUnderTest> running() {
    return nodes.stream().filter(ShoalUnderTest::alive).toList();
  }

  /** Stops every node; the worst exit status (0 if all stopped cleanly; a killed node is not counted). */
  public int stop(List<ShoalUnderTest> killed) {
    int worst = 0;
    for (ShoalUnderTest n : nodes) {
      int status = n.stop();
      if (!killed.contains(n) && status != 0 && worst == 0) {
        worst = status;
      }
    }
    return worst;
  }

  /** How the summary describes the member. */
  public String setupNote() {
    String first = nodes.get(0).setupNote();
    return member.nodes() + " shoal nodes " + (member.cluster()
        ? "forming one Akka cluster (config discovery, required_contact_points " + member.nodes() + ")"
        : "running independently (no cluster)")
        + ", each: " + first.substring(first.indexOf(',') + 2);
  }

  @Override
  public void close() {
    for (ShoalUnderTest n : nodes) {
      n.stop();
    }
  }
}

package io.shoal.cluster;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * What readiness means for a shoal node: its DNS sockets are bound, its caches are open, it is
 * not in its lameduck, and (in cluster mode) it has applied the cluster's record of flushes or,
 * finding no cluster to join, waited out {@code join_wait}. Cluster membership itself is not part
 * of it: a node outside a cluster serves on its own, so a DNS Service must keep sending it
 * queries. {@link ManagementPort} answers /ready from it.
 *
 * <p>The flush catch-up also holds the node's caches back: while it is pending, no query is
 * answered from them (nor from the near cache, nor as a stale answer) and no answer in them is
 * sent to another node, since they may hold answers the cluster flushed while this node was away
 * (an LMDB cache survives the restart). Queries go to the owner node or upstream meanwhile, and
 * the fresh answers they bring are kept: a flush only removes what was stored before it.
 */
public final class NodeStatus {
  private final AtomicBoolean socketsBound = new AtomicBoolean();
  private final AtomicBoolean cachesOpen = new AtomicBoolean();
  private final AtomicBoolean lameduck = new AtomicBoolean();
  private final AtomicBoolean flushesPending = new AtomicBoolean();
  private volatile Supplier<List<String>> warnings = List::of;

  public void socketsBound(boolean bound) {
    socketsBound.set(bound);
  }

  public void cachesOpen(boolean open) {
    cachesOpen.set(open);
  }

  /** Set on SIGTERM: readiness fails from then on while DNS is still answered. */
  public void lameduck(boolean on) {
    lameduck.set(on);
  }

  /**
   * True while a starting node waits to join a cluster and apply its replicated flushes (at most
   * {@code cluster.join_wait}); a node that serves already is not held back by the catch-up. Set
   * before the node's DNS sockets serve, so that not one answer comes from a cache before it.
   */
  public void flushesPending(boolean pending) {
    flushesPending.set(pending);
  }

  /**
   * Whether queries may be answered from the node's caches and their answers sent to other nodes:
   * false while the flush catch-up is pending (see the class comment). One volatile read.
   */
  public boolean cachesServable() {
    return !flushesPending.get();
  }

  /**
   * What is wrong that readiness does not fail for, each a sentence for the /ready body: an
   * upstream group that cannot do DNSSEC. Every node with the same configuration shares it, so
   * failing readiness would move no query to a better node; it would only take the Service away,
   * and with it the answers still cached, CD queries and names under negative trust anchors.
   */
  public void warnings(Supplier<List<String>> source) {
    warnings = source;
  }

  /** See {@link #warnings(Supplier)}; empty when there is nothing to say. */
  public List<String> warnings() {
    return warnings.get();
  }

  public boolean ready() {
    return socketsBound.get() && cachesOpen.get() && !lameduck.get() && !flushesPending.get();
  }

  /** Why the node is not ready, for logs and the readiness check; empty when it is. */
  public String notReadyBecause() {
    if (lameduck.get()) {
      return "stopping (lameduck)";
    }
    if (!cachesOpen.get()) {
      return "caches not open";
    }
    if (!socketsBound.get()) {
      return "DNS sockets not bound";
    }
    if (flushesPending.get()) {
      return "cluster flushes not applied yet";
    }
    return "";
  }
}

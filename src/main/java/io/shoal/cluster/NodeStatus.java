package io.shoal.cluster;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What readiness means for a shoal node: its DNS sockets are bound, its caches are open, it is
 * not in its lameduck, and (once it is a cluster member) it has applied the cluster's record of
 * flushes. Cluster membership itself is not part of it: a node outside a cluster serves on its
 * own, so a DNS Service must keep sending it queries. {@link ManagementPort} answers /ready from it.
 */
public final class NodeStatus {
  private final AtomicBoolean socketsBound = new AtomicBoolean();
  private final AtomicBoolean cachesOpen = new AtomicBoolean();
  private final AtomicBoolean lameduck = new AtomicBoolean();
  private final AtomicBoolean flushesPending = new AtomicBoolean();

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
   * {@code cluster.join_wait}); a node that serves already is not held back by the catch-up.
   */
  public void flushesPending(boolean pending) {
    flushesPending.set(pending);
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

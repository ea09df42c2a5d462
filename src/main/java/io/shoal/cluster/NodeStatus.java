package io.shoal.cluster;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.Extension;
import akka.actor.typed.ExtensionId;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What readiness means for a shoal node: its DNS sockets are bound, its caches are open, it is
 * not in its lameduck, and (once it is a cluster member) it has applied the cluster's record of
 * flushes. Cluster membership itself is not part of it: a node outside a cluster serves on its
 * own, so a DNS Service must keep sending it queries.
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

  /** True from joining a cluster until the replicated flushes were applied to the caches. */
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

  /** Makes {@code status} the one that {@link #of} returns for {@code system}. */
  public static void attach(ActorSystem<?> system, NodeStatus status) {
    ID.apply(system).status.set(status);
  }

  /** The status attached to {@code system} (a fresh, not-ready one when none was). */
  public static NodeStatus of(ActorSystem<?> system) {
    return ID.apply(system).status.get();
  }

  /**
   * Carries the node's status into an actor system, for the health checks that Akka Management
   * creates by reflection with only the actor system in hand.
   */
  private static final class Attached implements Extension {
    final AtomicReference<NodeStatus> status = new AtomicReference<>(new NodeStatus());
  }

  private static final class Id extends ExtensionId<Attached> {
    @Override
    public Attached createExtension(ActorSystem<?> system) {
      return new Attached();
    }
  }

  private static final Id ID = new Id();
}

package io.shoal.cluster;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.Extension;
import akka.actor.typed.ExtensionId;
import java.util.concurrent.atomic.AtomicBoolean;

/** Per-actor-system readiness facts that Akka Management's health checks read. */
public final class NodeStatus implements Extension {
  private final AtomicBoolean cachesOpen = new AtomicBoolean();

  /** The extension id. */
  public static final class Id extends ExtensionId<NodeStatus> {
    @Override
    public NodeStatus createExtension(ActorSystem<?> system) {
      return new NodeStatus();
    }
  }

  private static final Id ID = new Id();

  public static NodeStatus get(ActorSystem<?> system) {
    return ID.apply(system);
  }

  public void cachesOpen(boolean open) {
    cachesOpen.set(open);
  }

  public boolean cachesOpen() {
    return cachesOpen.get();
  }
}

package io.shoal.cluster;

import akka.actor.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Akka Management's /ready for a shoal node: {@link NodeStatus#ready()}. It replaces Akka's
 * cluster-membership check, which would keep a node that serves DNS on its own out of the
 * Service forever.
 */
public final class ReadinessCheck implements Supplier<CompletionStage<Boolean>> {
  private final ActorSystem system;

  public ReadinessCheck(ActorSystem system) {
    this.system = system;
  }

  @Override
  public CompletionStage<Boolean> get() {
    return CompletableFuture.completedFuture(NodeStatus.of(Adapter.toTyped(system)).ready());
  }
}

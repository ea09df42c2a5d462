package io.shoal.cluster;

import akka.actor.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Readiness check for Akka Management's /ready: a node takes traffic only once its caches are
 * open (cluster membership is checked by Akka's own cluster-membership check beside it).
 */
public final class CachesOpenCheck implements Supplier<CompletionStage<Boolean>> {
  private final NodeStatus status;

  public CachesOpenCheck(ActorSystem system) {
    this.status = NodeStatus.get(Adapter.toTyped(system));
  }

  @Override
  public CompletionStage<Boolean> get() {
    return CompletableFuture.completedFuture(status.cachesOpen());
  }
}

package io.shoal.ingress;

import io.shoal.cluster.OwnerDirectory;
import io.shoal.ingress.Stage.Verdict;
import io.shoal.metrics.ServerMetrics;
import java.util.ArrayList;
import java.util.List;

/**
 * The order in which the front door decides what to do with a query, for one {@link QueryPlan}:
 * each stage answers the query, drops it, or passes it on, and the first that does not pass ends
 * the chain. Built once per plan (at start and on each reload); a stage the plan or the node's
 * mode makes moot (no local data, no policy, no miss budget, no query log, a single node) is
 * left out, so it costs a query nothing. {@link #of} is the one place the order is written down.
 */
final class StageChain {
  /** What stays across plans: the caches' cluster view, the workers, the prefetch claims. */
  record Parts(OwnerDirectory owners, DirectOwnerLookups direct, Prefetch prefetch, Workers workers,
      ServerMetrics metrics) {}

  private final QueryPlan plan;
  private final Stage[] stages;

  private StageChain(QueryPlan plan, List<Stage> stages) {
    this.plan = plan;
    this.stages = stages.toArray(Stage[]::new);
  }

  /** The chain for {@code plan}, in the order a query meets its stages. */
  static StageChain of(QueryPlan plan, Parts parts) {
    OwnerDirectory owners = parts.owners();
    List<Stage> chain = new ArrayList<>();
    if (owners.clustered()) {
      chain.add(new ScreeningStages.OwnerReplies(owners));
    }
    if (plan.queryLog() != null) {
      chain.add(new ScreeningStages.QueryLogging(plan.queryLog()));
    }
    chain.add(new ScreeningStages.Access(plan.access()));
    chain.add(new ScreeningStages.Parse(plan.replies(), parts.metrics()));
    chain.add(new ScreeningStages.Loops(plan.loops()));
    if (plan.local() != null) {
      chain.add(new AnswerStages.Local(plan.local()));
    }
    if (plan.policy() != null) {
      chain.add(new AnswerStages.Policy(plan.policy()));
    }
    if (owners.keepsCopies()) {
      chain.add(new AnswerStages.NearCache(owners));
    }
    chain.add(new AnswerStages.Cache(owners, plan.prefetch() ? parts.prefetch() : null, parts.workers()));
    chain.add(new MissStages.NoRecursion(parts.metrics()));
    chain.add(new MissStages.Denials());
    if (plan.missBudget().enabled()) {
      chain.add(new MissStages.MissBudgets(plan.missBudget(), plan.serveStale(), owners, parts.metrics()));
    }
    chain.add(new MissStages.Admission(parts.workers()));
    if (owners.clustered()) {
      chain.add(new MissStages.OwnerLookup(parts.direct(), parts.workers()));
    }
    chain.add(new MissStages.HandOff(parts.workers()));
    return new StageChain(plan, chain);
  }

  QueryPlan plan() {
    return plan;
  }

  /** Runs {@code q} through the stages until one answers, drops or owes it (the last always owes it). */
  void run(QueryContext q) {
    for (Stage stage : stages) {
      if (stage.decide(q) != Verdict.PASS) {
        return;
      }
    }
  }

  /** The stages' names, in order: {@code access_control -> parse -> ...}. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    for (Stage stage : stages) {
      b.append(b.length() == 0 ? "" : " -> ").append(stage);
    }
    return b.toString();
  }
}

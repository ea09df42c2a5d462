package io.shoal.ingress;

import io.shoal.cluster.OwnerDirectory;
import io.shoal.ingress.Stage.Verdict;
import io.shoal.metrics.ServerMetrics;
import io.shoal.querylog.QueryLog;
import io.shoal.wire.DnsQuery;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The order in which the front door decides what to do with a query, for one {@link QueryPlan}:
 * each stage answers the query, drops it, or passes it on, and the first that does not pass ends
 * the chain. Built once per plan (at start and on each reload); a stage the plan or the node's
 * mode makes moot (no local data, no policy, no miss budget, a single node) is left out, so it
 * costs a query nothing. {@link #of} is the one place the order is written down.
 */
final class StageChain {
  /** What stays across plans: the cluster view, the workers, the prefetch claims. */
  record Parts(OwnerDirectory owners, DirectOwnerLookups direct, Prefetch prefetch, Workers workers,
      ServerMetrics metrics, LongSupplier clock) {}

  private final QueryPlan plan;
  /** Cluster mode: takes owner nodes' replies that reach a listening socket; else null. */
  private final Stage.BeforeParse ownerReplies;
  /** Watches every query's reply; null when both query logs are off. */
  private final QueryLog queryLog;
  private final Stage.BeforeParse[] beforeParse;
  private final ScreeningStages.Parse parse;
  private final Stage[] stages;
  /** The stage that answers from the caches, which {@link #warm} reads ahead for. */
  private final AnswerStages.Cache cache;

  private StageChain(QueryPlan plan, Stage.BeforeParse ownerReplies, List<Stage.BeforeParse> beforeParse,
      ScreeningStages.Parse parse, List<Stage> stages, AnswerStages.Cache cache) {
    this.plan = plan;
    this.ownerReplies = ownerReplies;
    this.queryLog = plan.queryLog();
    this.beforeParse = beforeParse.toArray(Stage.BeforeParse[]::new);
    this.parse = parse;
    this.stages = stages.toArray(Stage[]::new);
    this.cache = cache;
  }

  /** The chain for {@code plan}, in the order a query meets its stages. */
  static StageChain of(QueryPlan plan, Parts parts) {
    OwnerDirectory owners = parts.owners();
    Workers workers = parts.workers();
    // Not a query at all: an owner node's reply (cluster mode). Then the query log's watch, if on.
    Stage.BeforeParse ownerReplies = owners.clustered() ? new ScreeningStages.OwnerReplies(owners) : null;
    List<Stage.BeforeParse> beforeParse = List.of(new ScreeningStages.Access(plan.access()));
    ScreeningStages.Parse parse = new ScreeningStages.Parse(plan.replies(), parts.metrics());
    List<Stage> chain = new ArrayList<>();
    chain.add(new ScreeningStages.Loops(plan.loops()));
    if (plan.local() != null) {
      chain.add(new AnswerStages.Local(plan.local()));
    }
    if (plan.policy() != null) {
      chain.add(new AnswerStages.Policy(plan.policy()));
    }
    if (owners.keepsCopies()) {
      chain.add(new AnswerStages.NearCache(owners, parts.clock()));
    }
    AnswerStages.Cache cache = new AnswerStages.Cache(plan.profiles(), parts.clock(), owners,
        plan.prefetch() ? parts.prefetch() : null, workers);
    chain.add(cache);
    chain.add(new MissStages.NoRecursion(parts.metrics()));
    chain.add(new MissStages.Denials(plan.profiles(), parts.clock()));
    if (plan.missBudget().enabled()) {
      chain.add(new MissStages.MissBudgets(plan, parts.clock(), owners, parts.metrics()));
    }
    chain.add(new MissStages.Admission(workers, plan.streamGuard().toMillis()));
    if (owners.clustered()) {
      chain.add(new MissStages.OwnerLookup(parts.direct(), plan.profiles(), workers));
    }
    chain.add(new MissStages.HandOff(workers));
    return new StageChain(plan, ownerReplies, beforeParse, parse, chain, cache);
  }

  QueryPlan plan() {
    return plan;
  }

  /**
   * Runs a query as read through the stages until one answers, drops or owes it (the last always
   * owes it). Every value a stage needs is an argument: no per-query object, no shared one written.
   */
  void run(byte[] packet, InetSocketAddress client, Protocol protocol, ReplyPath arrivedOn) {
    if (ownerReplies != null && ownerReplies.decide(packet, client, protocol, arrivedOn) != Verdict.PASS) {
      return;
    }
    ReplyPath reply = queryLog == null ? arrivedOn : queryLog.watch(packet, client, protocol, arrivedOn);
    for (Stage.BeforeParse stage : beforeParse) {
      if (stage.decide(packet, client, protocol, reply) != Verdict.PASS) {
        return;
      }
    }
    DnsQuery query = parse.parse(packet, client, reply);
    if (query == null) {
      return;
    }
    for (Stage stage : stages) {
      if (stage.decide(query, client, protocol, reply, arrivedOn) != Verdict.PASS) {
        return;
      }
    }
  }

  /**
   * Reads ahead, in the caches, what the look-ups of a batch of queries as read will read, so
   * that their cache misses overlap (see {@link io.shoal.cache.AnswerCache#warm}); answers
   * nothing. Returns a value to be discarded.
   */
  int warm(byte[][] packets, int count) {
    return cache.warm(packets, count);
  }

  /** The stages' names, in order: {@code access_control -> parse -> ...}. */
  @Override
  public String toString() {
    List<Object> all = new ArrayList<>();
    if (ownerReplies != null) {
      all.add(ownerReplies);
    }
    if (queryLog != null) {
      all.add("query_log");
    }
    all.addAll(List.of(beforeParse));
    all.add(parse);
    all.addAll(List.of(stages));
    StringBuilder b = new StringBuilder();
    for (Object stage : all) {
      b.append(b.length() == 0 ? "" : " -> ").append(stage);
    }
    return b.toString();
  }
}

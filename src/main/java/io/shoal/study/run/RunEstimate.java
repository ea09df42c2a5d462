package io.shoal.study.run;

import io.shoal.study.attack.AttackPhases;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/** How long a run will take, member by member, for the time-left messages and the estimate shown before it starts. */
final class RunEstimate {
  /** Rough cost of starting and stopping one member, for the time-left estimate. */
  static final Duration MEMBER_OVERHEAD = Duration.ofSeconds(12);
  /** Forming a cluster, then the remote-lookup probe: beyond starting its nodes. */
  private static final Duration CLUSTER_OVERHEAD = Duration.ofSeconds(45);

  private final RunSettings run;

  RunEstimate(RunSettings run) {
    this.run = run;
  }

  /** One member's turn. */
  Duration of(Member m) {
    Scenario scenario = run.scenario();
    if (scenario.outage() != null) {
      return OutageRun.estimate(scenario, run.load());
    }
    if (scenario.cacheMemory() != null) {
      return CacheMemoryStudy.estimate(scenario, run.load(), run.quick());
    }
    Duration measured = run.load().warmup().plus(run.load().duration()).plus(MemberMeasurement.SETTLE.multipliedBy(2));
    if (scenario.attacks() != null) {
      return MEMBER_OVERHEAD.plus(AttackPhases.estimate(run.load(), scenario.attacks())).multipliedBy(run.members().size());
    }
    if (!m.isNodeGroup()) {
      return MEMBER_OVERHEAD.plus(measured);
    }
    // nodes start together but share the cores; a cluster also forms, and runs the probe
    Duration extra = m.cluster() ? CLUSTER_OVERHEAD : Duration.ZERO;
    if (m.kill() != null) {
      extra = extra.plus(Duration.ofSeconds(30)); // the cluster downs the killed node about 30 s after the kill
    }
    return MEMBER_OVERHEAD.multipliedBy(m.nodes()).plus(extra).plus(measured);
  }

  /** One round: every member that is not skipped, once. */
  Duration round() {
    return notSkipped(run.scenario().members()).map(this::of).reduce(Duration.ZERO, Duration::plus);
  }

  /** The whole run. */
  Duration total() {
    if (run.scenario().recipe().sideBySide()) {
      long turns = run.rounds() * notSkipped(run.members()).count();
      return startedSideBySide(run.members().size()).plus(slice().multipliedBy(turns));
    }
    return round().multipliedBy(run.rounds());
  }

  /** recipe.turns = slices: one member's measured turn, its counters read before and after. */
  Duration slice() {
    return run.load().duration().plus(MemberMeasurement.SETTLE.multipliedBy(2));
  }

  /** recipe.turns = slices: starting and warming up the first {@code count} members that are not skipped. */
  Duration startedSideBySide(int count) {
    return MEMBER_OVERHEAD.plus(run.load().warmup()).multipliedBy(notSkipped(run.members().subList(0, count)).count());
  }

  /** The members of {@code members} this run measures: those not skipped. */
  private Stream<Member> notSkipped(List<Member> members) {
    return members.stream().filter(m -> !run.skipped().containsKey(m.name()));
  }
}

package io.shoal.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import io.shoal.access.AccessControl;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.MissBudgetSettings;
import io.shoal.config.ShoalConfig;
import io.shoal.loop.LoopDetector;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.ProfileTable;
import io.shoal.ratelimit.MissBudget;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The front door's stages in the order the debug log lists them ("query path: ..."): a stage the
 * configuration makes moot is not in the chain at all.
 */
class StageChainTest {
  private final ServerMetrics metrics = new ServerMetrics();
  private final ShoalConfig config = ShoalConfig.from(ConfigFactory.parseString(
          "shoal.upstreams.default.servers = [\"127.0.0.1:1\"]\nshoal.dnssec.validation = off")
      .withFallback(ConfigFactory.load()).resolve());

  private QueryPlan plan(MissBudget budget, boolean prefetch) {
    return new QueryPlan(new ProfileTable(Map.of()), new AccessControl(config.accessControl(), metrics), budget,
        config.replies(), null, null, null, new LoopDetector(config, null), config.serveStale(), prefetch,
        Duration.ofSeconds(10));
  }

  private String chain(QueryPlan plan) {
    OwnerDirectory single = new OwnerDirectory();
    Workers workers = new Workers(List.of(), new AtomicInteger[0], 1, metrics);
    return StageChain.of(plan, new StageChain.Parts(single, new DirectOwnerLookups(single, Duration.ZERO, metrics,
        System::currentTimeMillis), new Prefetch(true, 1), workers, metrics, System::currentTimeMillis)).toString();
  }

  @Test
  void theDefaultsOnOneNodeRunOnlyTheStagesThatApply() {
    assertEquals("access_control -> parse -> loop_probes -> cache+prefetch -> rd0_refused -> dnssec_denials"
        + " -> worker_admission -> worker", chain(plan(MissBudget.OFF, true)));
  }

  @Test
  void aMissBudgetComesBeforeTheWorkerAndPrefetchOffLeavesTheCacheAlone() {
    MissBudget budget = new MissBudget(new MissBudgetSettings(10, 0, 24, 56, 2, false, 1024));
    assertEquals("access_control -> parse -> loop_probes -> cache -> rd0_refused -> dnssec_denials"
        + " -> miss_budget -> worker_admission -> worker", chain(plan(budget, false)));
  }
}

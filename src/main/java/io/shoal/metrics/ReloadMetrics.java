package io.shoal.metrics;

import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Gauge;
import kamon.tag.TagSet;

/**
 * Configuration reloads: shoal_config_reloads_total{result="applied|refused"}, and
 * shoal_config_last_reload_successful (1 until a reload is refused, 1 again after one is applied;
 * a watched file read again counts as a reload),
 * the gauge an alert watches, as Prometheus's own prometheus_config_last_reload_successful.
 */
public final class ReloadMetrics {
  private final Counter applied;
  private final Counter refused;
  private final Gauge lastSuccessful;

  /** A node's reload instruments, the gauge set to 1 (a node starts with its configuration applied). */
  public ReloadMetrics(String node) {
    this(node, true);
  }

  /**
   * The same instruments without touching the gauge: for the file watchers, whose reloads (a
   * changed RPZ file, domain list or hosts file) are reported here like configuration reloads.
   *
   * @param node the cluster node label, or null for a single node
   */
  public static ReloadMetrics of(String node) {
    return new ReloadMetrics(node, false);
  }

  private ReloadMetrics(String node, boolean starting) {
    TagSet base = node == null ? TagSet.Empty() : TagSet.of("node", node);
    var reloads = Kamon.counter("shoal.config.reloads",
        "Configuration reloads (SIGHUP, shoal reload, a changed watched file), by result");
    applied = reloads.withTags(base.withTag("result", "applied"));
    refused = reloads.withTags(base.withTag("result", "refused"));
    lastSuccessful = Kamon.gauge("shoal.config.last.reload.successful",
        "1 when the last configuration reload was applied (or none was asked for), 0 when it was refused")
        .withTags(base);
    if (starting) {
      lastSuccessful.update(1);
    }
  }

  public void applied() {
    applied.increment();
    lastSuccessful.update(1);
  }

  public void refused() {
    refused.increment();
    lastSuccessful.update(0);
  }
}

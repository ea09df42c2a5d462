package io.shoal.server;

import io.shoal.config.ShoalConfig;
import io.shoal.ingress.QueryPlan;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import io.shoal.transport.UdpTransport;

/** What a running node does with a reloaded configuration: applies what can change live. */
final class LiveReconfiguration {

  private LiveReconfiguration() {
  }

  /**
   * A reload's new configuration, taken live: a new query plan (upstreams, profiles, access
   * control, local data, policy, serve-stale, prefetch, DNSSEC, logs) for the queries read from
   * now on, the UDP rate limit, and a look at the certificate files. The caches, the sockets and
   * the cluster stay; queries in flight finish as they began.
   */
  static void apply(
      ShoalConfig next, Resolver resolver, UdpTransport udp, ServerMetrics metrics, EncryptedListeners encrypted) {
    QueryPlans plans = resolver.plans();
    ShoalConfig before = plans.current().config();
    // A file changed since it was read, or refused when its watcher read it: read again now, so
    // the reload says whether it loads.
    QueryPlan plan = plans.current().plan();
    boolean filesToRead = (plan.local() != null && plan.local().needsReading())
        || (plan.policy() != null && plan.policy().needsReading());
    if (!next.equals(before) || filesToRead) {
      QueryPlans.Built built = plans.build(next);
      resolver.ingress().replan(built.plan());
      plans.activate(built);
      if (!next.rateLimit().equals(before.rateLimit())) {
        udp.rateLimit(new ResponseRateLimiter(next.rateLimit(), metrics));
      }
    }
    // After a renewal an operator reloads: the certificate is looked at now, not at the next check.
    encrypted.checkCertificate();
  }
}

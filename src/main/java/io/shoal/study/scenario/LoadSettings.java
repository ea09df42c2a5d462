package io.shoal.study.scenario;

import java.time.Duration;

/**
 * How dnsperf drives a member: its flags -c, -q, -T, -l, and a warm-up run before measuring.
 *
 * @param maxQps dnsperf's -Q, the most queries a second each process sends, for a paced member
 *     ({@link Pace}); null for the closed loop every other member runs, as fast as answers come
 */
public record LoadSettings(int clients, int outstanding, int threads, Duration duration, Duration warmup,
    Integer maxQps) {

  /** The same load with another duration and warm-up, as --quick uses. */
  public LoadSettings shortened(Duration newDuration, Duration newWarmup) {
    return new LoadSettings(clients, outstanding, threads, newDuration, newWarmup, maxQps);
  }

  /** The same load with at most {@code queries} outstanding (dnsperf -q). */
  public LoadSettings withOutstanding(int queries) {
    if (queries < 1) {
      throw new IllegalArgumentException("dnsperf -q takes a positive count, not " + queries);
    }
    return new LoadSettings(clients, queries, threads, duration, warmup, maxQps);
  }

  /** The same load with each dnsperf process held to {@code qps} queries a second. */
  public LoadSettings paced(int qps) {
    if (qps < 1) {
      throw new IllegalArgumentException("dnsperf -Q takes a positive rate, not " + qps);
    }
    return new LoadSettings(clients, outstanding, threads, duration, warmup, qps);
  }
}

package io.shoal.study.scenario;

import java.time.Duration;

/** How dnsperf drives a member: its flags -c, -q, -T, -l, and a warm-up run before measuring. */
public record LoadSettings(int clients, int outstanding, int threads, Duration duration, Duration warmup) {

  /** The same load with another duration and warm-up, as --quick uses. */
  public LoadSettings shortened(Duration newDuration, Duration newWarmup) {
    return new LoadSettings(clients, outstanding, threads, newDuration, newWarmup);
  }
}

package io.shoal.study.server;

import io.shoal.study.host.NetworkIsolation;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Recipe;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;

/**
 * knotd answering the load itself: the same zone the study's upstream serves, authoritatively,
 * with no cache in front. Nothing is cheaper per answer than serving it from the zone, so its QPS
 * and CPU per query are the ceiling a cache on this host is read against. It has no cache
 * counters and no hit rate: nothing it answers reaches the study's knotd.
 */
final class KnotdDirect extends ServerUnderTest {

  KnotdDirect(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p, Prerequisites.Tools t)
      throws IOException {
    super(m, r, dir, upstream, p, t);
  }

  private Path conf() {
    return dir.resolve("knot.conf");
  }

  @Override
  protected void writeConfig() throws IOException {
    KnotUpstream.writeServerFiles(dir, recipe, port, workers(), NetworkIsolation.root());
  }

  @Override
  protected List<String> command() {
    return List.of(tools.path("knotd"), "-c", conf().toString());
  }

  @Override
  public CacheCounters counters(Path audit) {
    return CacheCounters.NONE;
  }

  @Override
  public boolean forwardsToUpstream() {
    return false;
  }

  /** knotd's UDP workers: one per core unless the member says otherwise. */
  @Override
  public int workers() {
    return (int) setting("udp_workers", defaultThreads());
  }

  @Override
  public String setupNote() {
    return "knotd answering directly (the ceiling): the upstream's zone and configuration, authoritative, no cache, "
        + workers() + " UDP workers";
  }
}

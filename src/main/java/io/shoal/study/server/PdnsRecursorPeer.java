package io.shoal.study.server;

import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Recipe;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * PowerDNS Recursor forwarding the study zone to knotd. Its packet cache is capped at the
 * recipe's entries; the record cache behind it refills between its periodic trims, so under
 * churn its misses are mostly answered by that record cache, not by knotd.
 */
final class PdnsRecursorPeer extends ServerUnderTest {
  PdnsRecursorPeer(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p,
      Prerequisites.Tools t) throws IOException {
    super(m, r, dir, upstream, p, t);
  }

  @Override
  public int workers() {
    return (int) setting("threads", defaultThreads());
  }

  @Override
  protected void writeConfig() throws IOException {
    List<String> lines = new ArrayList<>(List.of(
        "local-address=127.0.0.1",
        "local-port=" + port,
        "forward-zones=" + zoneName() + "=" + upstreamHost() + ":" + upstream.getPort(),
        "dnssec=off",
        "socket-dir=" + dir,
        "daemon=no",
        "disable-syslog=yes",
        "threads=" + workers(),
        "max-packetcache-entries=" + setting("max_packetcache_entries", recipe.maxEntries()),
        "max-cache-entries=" + setting("max_cache_entries", recipe.maxEntries()),
        // no security-status polling: it is a query to the outside
        "security-poll-suffix="));
    lines.addAll(extraLines());
    lines.add("");
    Files.writeString(dir.resolve("recursor.conf"), String.join("\n", lines));
  }

  @Override
  protected List<String> command() {
    return List.of(tools.path("pdns_recursor"), "--config-dir=" + dir);
  }

  @Override
  public CacheCounters counters(Path audit) throws StudyException {
    StartedProcesses.Completed c = processes.run(
        List.of(tools.path("rec_control"), "--socket-dir=" + dir, "get-all"), audit, STATS_LIMIT);
    if (c.exitCode() != 0) {
      throw new StudyException("rec_control get-all failed: " + c.output().strip());
    }
    Map<String, String> stats = UnboundPeer.keyValues(c.output(), " ");
    return new CacheCounters(UnboundPeer.number(stats, "packetcache-hits"),
        UnboundPeer.number(stats, "packetcache-misses"), null, null, null, null);
  }

  @Override
  public String setupNote() {
    return "pdns-recursor, " + workers() + " threads, max-packetcache-entries "
        + setting("max_packetcache_entries", recipe.maxEntries()) + ", max-cache-entries "
        + setting("max_cache_entries", recipe.maxEntries())
        + "; cache_hits/cache_misses are its packet cache (the record cache behind it answers most misses)";
  }
}

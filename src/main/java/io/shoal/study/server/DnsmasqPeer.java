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

/**
 * dnsmasq forwarding to knotd. Its cache is sized in entries; its statistics are answered over
 * DNS as CHAOS TXT records (hits.bind, misses.bind).
 */
final class DnsmasqPeer extends ServerUnderTest {
  DnsmasqPeer(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p, Prerequisites.Tools t)
      throws IOException {
    super(m, r, dir, upstream, p, t);
  }

  private Path conf() {
    return dir.resolve("dnsmasq.conf");
  }

  @Override
  public int workers() {
    return 1; // dnsmasq is single-threaded
  }

  private long forwardMax() {
    // the default of 150 concurrent forwards is below dnsperf's outstanding window
    long window = (long) recipe.load().clients() * recipe.load().outstanding();
    return setting("dns_forward_max", Math.max(1000, window));
  }

  @Override
  protected void writeConfig() throws IOException {
    // A config file overrides the command line, so everything lives in the file.
    List<String> lines = new ArrayList<>(List.of(
        "port=" + port,
        "listen-address=127.0.0.1",
        "bind-interfaces",
        "no-resolv",
        "no-hosts",
        "no-poll",
        "server=" + upstreamHost() + "#" + upstream.getPort(),
        "cache-size=" + setting("cache_size", recipe.maxEntries()),
        "dns-forward-max=" + forwardMax(),
        "pid-file=" + dir.resolve("dnsmasq.pid")));
    if ("root".equals(System.getProperty("user.name"))) {
      lines.add("user=root"); // otherwise it drops to nobody, who cannot read the run directory
    }
    lines.addAll(extraLines());
    lines.add("");
    Files.writeString(conf(), String.join("\n", lines));
  }

  @Override
  protected List<String> command() {
    return List.of(tools.path("dnsmasq"), "--keep-in-foreground", "--log-facility=-", "--conf-file=" + conf());
  }

  @Override
  public CacheCounters counters(Path audit) throws StudyException, IOException {
    String hits = DnsProbe.chaosText(address(), "hits.bind.");
    String misses = DnsProbe.chaosText(address(), "misses.bind.");
    processes.note("# in-process DNS queries: CH TXT hits.bind. and misses.bind. to " + hostPort());
    Files.writeString(audit, "hits.bind " + hits + "\nmisses.bind " + misses + "\n");
    if (hits == null || misses == null) {
      throw new StudyException("dnsmasq did not answer hits.bind / misses.bind");
    }
    return new CacheCounters(Long.parseLong(hits.strip()), Long.parseLong(misses.strip()), null, null, null, null);
  }

  @Override
  public String setupNote() {
    return "dnsmasq, cache-size " + setting("cache_size", recipe.maxEntries()) + " entries, dns-forward-max "
        + forwardMax();
  }
}

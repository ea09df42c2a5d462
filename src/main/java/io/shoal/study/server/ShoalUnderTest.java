package io.shoal.study.server;

import com.typesafe.config.Config;
import io.shoal.cache.CacheSettings;
import io.shoal.config.ProfileSettings;
import io.shoal.config.ShoalConfig;
import io.shoal.study.host.CpuQuota;
import io.shoal.study.host.JavaLauncher;
import io.shoal.study.host.LoopbackPort;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.measure.MetricsScrape;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Recipe;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalDouble;
import java.util.stream.Stream;

/** A shoal member: the jar run as a child JVM on a configuration made from the recipe and the member's deltas. */
public final class ShoalUnderTest extends ServerUnderTest {
  static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(10);
  static final Duration METRICS_POLL = Duration.ofMillis(200);
  /** One client for every request: polling a forming cluster makes hundreds, each client owns a thread. */
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(SCRAPE_TIMEOUT).build();

  private final Path jar;
  private final int metricsPort;
  private final int adminPort;
  private final String label;
  private final ClusterPlacement placement;
  private final String rendered;
  private final ShoalConfig validated;
  /** The process's CPU quota while it runs (recipe.cpu_quota), or null. */
  private CpuQuota quota;

  /** A member of one node. */
  public ShoalUnderTest(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p,
      Prerequisites.Tools tools, Path jar) throws IOException {
    this(m, r, dir, upstream, p, tools, jar, m.name(), null, null);
  }

  /**
   * One node of a member; {@code placement} puts it in the member's cluster, null keeps it
   * independent; {@code certificate} is presented on the DoT or DoH listener of a member queried
   * over one (null for the others).
   */
  public ShoalUnderTest(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p,
      Prerequisites.Tools tools, Path jar, String label, ClusterPlacement placement, StudyCertificate certificate)
      throws IOException {
    super(m, r, dir, upstream, p, tools, certificate);
    this.jar = jar;
    this.label = label;
    this.placement = placement;
    this.metricsPort = LoopbackPort.pick();
    this.adminPort = LoopbackPort.pick();
    Config c = ShoalMemberConfig.withEncryptedListener(
        ShoalMemberConfig.memberConfig(r, m, port, metricsPort, adminPort, upstream, this.dir.resolve("data"),
            placement),
        m.transport(), encryptedPort, certificate);
    this.rendered = ShoalMemberConfig.render(c);
    this.validated = ShoalMemberConfig.validate(m, rendered);
  }

  @Override
  protected void writeConfig() throws IOException {
    Path data = dir.resolve("data");
    if (Files.exists(data)) {
      // a fresh data path for every member: a warm LMDB left by an earlier run would skew the hit rate
      try (Stream<Path> walk = Files.walk(data)) {
        for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
    Files.createDirectories(data);
    Files.writeString(configFile(), rendered, StandardCharsets.UTF_8);
  }

  private Path configFile() {
    return dir.resolve("shoal.conf");
  }

  @Override
  protected List<String> command() {
    List<String> cmd = new ArrayList<>();
    cmd.add(JavaLauncher.path());
    cmd.addAll(recipe.jvmOptions());
    cmd.addAll(member.jvmOptions());
    if (quota != null) {
      cmd.addAll(quota.jvmOptions());
    }
    cmd.addAll(List.of("-jar", jar.toAbsolutePath().toString(), "serve", "--config", configFile().toString()));
    return quota == null ? cmd : quota.wrap(cmd);
  }

  /** With recipe.cpu_quota, the JVM starts inside a CPU quota of its own (made here, removed by {@link #stop}). */
  @Override
  public void launch() throws IOException {
    if (recipe.cpuQuota() != null && quota == null) {
      try {
        String name = label.replace('/', '-');
        quota = recipe.cpuQuotaAfterWarmup()
            ? CpuQuota.deferred(name, recipe.cpuQuota(), recipe.cpuPeriod())
            : CpuQuota.make(name, recipe.cpuQuota(), recipe.cpuPeriod());
      } catch (StudyException e) {
        throw new IOException(e.getMessage(), e);
      }
    }
    super.launch();
  }

  /** Stops the JVM, then removes its CPU quota's group. */
  @Override
  public int stop() {
    int status = super.stop();
    if (quota != null) {
      quota.remove();
      quota = null;
    }
    return status;
  }

  /** The quota this node runs under, or null. */
  public CpuQuota quota() {
    return quota;
  }

  @Override
  public CacheCounters counters(Path audit) throws StudyException, IOException {
    return countersOf(scrape(audit));
  }

  /** The node's metrics now; the raw text goes to {@code audit}. */
  public MetricsScrape scrape(Path audit) throws StudyException, IOException {
    String text = scrape();
    Files.writeString(audit, text, StandardCharsets.UTF_8);
    return MetricsScrape.parse(text);
  }

  /**
   * The answers held by the cache the study's zone is served from ({@code shoal_cache_entries} of
   * that cache, summed over its shards).
   */
  @Override
  public Long cachedAnswers(Path audit) throws StudyException, IOException {
    return whole(scrape(audit).samples().stream()
        .filter(s -> s.name().equals("shoal_cache_entries") && servingCacheName().equals(s.labels().get("cache")))
        .mapToDouble(MetricsScrape.Sample::value).reduce(Double::sum));
  }

  /** shoal's cache counters in one scrape. */
  public static CacheCounters countersOf(MetricsScrape s) {
    return new CacheCounters(
        whole(s.sum("shoal_cache_hits_total")), whole(s.sum("shoal_cache_misses_total")),
        whole(s.sum("shoal_cache_fill_seconds_count")), decimal(s.sum("shoal_cache_fill_seconds_sum")),
        whole(s.sum("shoal_cache_eviction_seconds_count")), decimal(s.sum("shoal_cache_eviction_seconds_sum")));
  }

  /**
   * Waits until the node answers a DNS query and serves /metrics: shoal binds its DNS sockets
   * before anything else and starts the metrics endpoint last, so a node can answer queries a few
   * seconds before its counters can be read.
   */
  @Override
  public void awaitAnswer() throws StudyException {
    super.awaitAnswer();
    URI metrics = URI.create("http://127.0.0.1:" + metricsPort + "/metrics");
    processes.note("# in-process: poll " + metrics + " until it answers 200 (at most " + READY_LIMIT.toSeconds()
        + " s)");
    long deadline = System.nanoTime() + READY_LIMIT.toNanos();
    StudyException last = null;
    while (System.nanoTime() < deadline && alive()) {
      try {
        fetch(metrics, true);
        return;
      } catch (StudyException e) {
        last = e;
      }
      try {
        Thread.sleep(METRICS_POLL.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StudyException("interrupted while waiting for " + metrics, e);
      }
    }
    throw new StudyException(label() + " answers DNS but " + metrics + " did not answer within "
        + READY_LIMIT.toSeconds() + " s" + (alive() ? "" : " (the process exited)")
        + (last == null ? "" : ": " + last.getMessage()), last);
  }

  /** The node's metrics text now, one noted HTTP GET of {@link #metricsUri()}. */
  public String scrape() throws StudyException {
    return httpGet(metricsUri(), true).body();
  }

  /** The node's Prometheus endpoint. */
  public URI metricsUri() {
    return URI.create("http://127.0.0.1:" + metricsPort + "/metrics");
  }

  /**
   * One bounded HTTP GET on loopback, noted in the command record; {@code ok} requires status 200.
   */
  HttpResponse<String> httpGet(URI uri, boolean ok) throws StudyException {
    processes.note("# in-process: HTTP GET " + uri);
    return fetch(uri, ok);
  }

  /** {@link #httpGet} without the note, for polling (the poll itself is noted once). */
  public HttpResponse<String> fetch(URI uri, boolean ok) throws StudyException {
    try {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(uri).timeout(SCRAPE_TIMEOUT).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      if (ok && r.statusCode() != 200) {
        throw new StudyException(uri + " answered HTTP " + r.statusCode());
      }
      return r;
    } catch (IOException e) {
      // HttpClient's ConnectException has no message: its class says what happened
      String why = e.getMessage() == null ? e.toString() : e.getMessage();
      throw new StudyException("cannot GET " + uri + ": " + why, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted while fetching " + uri, e);
    }
  }

  /** Akka Management's port of a clustered node; -1 for a node outside a cluster. */
  public int managementPort() {
    return placement == null ? -1 : placement.managementPort();
  }

  @Override
  public String servingProcesses() {
    return "the shoal JVM";
  }

  /** Writes the quota's cpu.stat (periods, throttled periods, throttled time) to {@code audit}; no-op without one. */
  public void quotaStat(Path audit) throws IOException {
    String stat = quota == null ? null : quota.stat();
    if (stat != null) {
      Files.writeString(audit, stat, StandardCharsets.UTF_8);
    }
  }

  @Override
  public String label() {
    return label;
  }

  // Kamon registers an instrument on first use: before any fill there is no sample, which is 0.
  private static Long whole(OptionalDouble v) {
    return Math.round(v.orElse(0));
  }

  private static Double decimal(OptionalDouble v) {
    return v.orElse(0);
  }

  private CacheSettings servingCache() {
    return validated.caches().get(servingCacheName());
  }

  private String servingCacheName() {
    return validated.profiles().stream()
        .filter(p -> p.match().contains("."))
        .map(ProfileSettings::cache)
        .findFirst().orElse("answers");
  }

  @Override
  public String lmdbSync() {
    CacheSettings c = servingCache();
    return c.backend() == CacheSettings.Backend.LMDB ? c.lmdb().sync().configName() : null;
  }

  @Override
  public String runtime() {
    return validated.fill().configName();
  }

  @Override
  public int workers() {
    return validated.workers();
  }

  @Override
  public String setupNote() {
    CacheSettings c = servingCache();
    String lists = validated.policy().domainLists().stream()
        .map(l -> l.file().getFileName() + " (" + l.action().label() + ")")
        .collect(java.util.stream.Collectors.joining(", "));
    return "shoal, " + c.backend().configName() + " cache of " + c.maxEntries() + " entries ("
        + c.whenFull().configName() + "), " + validated.workers()
        + " ingress workers, " + validated.fill().configName() + (lists.isEmpty() ? "" : ", domain list " + lists)
        + (recipe.signed() ? ", DNSSEC validation " + validated.dnssec().mode().configName()
            + (member.validates() ? " (trust anchor: the zone's DS)" : "") : "")
        + (transport().encrypted() ? ", " + transport().configName() + " on its own port" : "")
        + (recipe.cpuQuota() == null ? "" : ", under a CPU quota of " + recipe.cpuQuota() + " CPU of its own"
            + (recipe.cpuPeriod().equals(CpuQuota.DEFAULT_PERIOD) ? ""
                : " per " + CpuQuota.periodText(recipe.cpuPeriod()) + " CFS period")
            + (recipe.cpuQuotaAfterWarmup() ? " from the end of the warm-up on (its weight only before)" : ""));
  }

  /** Applies a quota that waited for the warm-up ({@code recipe.cpu_quota_from = measured}); nothing otherwise. */
  public void enforceQuota() throws StudyException {
    if (quota != null) {
      quota.enforce();
    }
  }
}

package io.shoal.study.server;

import io.shoal.study.host.LoopbackPort;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.xbill.DNS.Type;

/**
 * One member's server while it is measured: it writes its own configuration into its member
 * directory, starts, answers on a free loopback port, forwards to the study's knotd, and reports
 * its cache counters from its own statistics.
 */
public abstract class ServerUnderTest implements AutoCloseable {
  /** How long a server may take to answer its first query (a JVM, or a resolver opening its cache). */
  static final Duration READY_LIMIT = Duration.ofSeconds(90);
  /** Bound on each statistics command. */
  static final Duration STATS_LIMIT = Duration.ofSeconds(30);

  protected final Member member;
  protected final Recipe recipe;
  protected final Path dir;
  protected final InetSocketAddress upstream;
  protected final StartedProcesses processes;
  protected final Prerequisites.Tools tools;
  protected final int port;
  /** The certificate of a member queried over DoT or DoH; null otherwise. */
  protected final StudyCertificate certificate;
  /** The DoT or DoH port of a member queried over it; -1 otherwise. */
  protected final int encryptedPort;
  private Process process;

  protected ServerUnderTest(Member member, Recipe recipe, Path dir, InetSocketAddress upstream,
      StartedProcesses processes, Prerequisites.Tools tools) throws IOException {
    this(member, recipe, dir, upstream, processes, tools, null);
  }

  /**
   * A server that also listens for DoT or DoH with {@code certificate} when the member is queried
   * over one of them; {@code certificate} is null for a member queried over UDP or TCP.
   */
  protected ServerUnderTest(Member member, Recipe recipe, Path dir, InetSocketAddress upstream,
      StartedProcesses processes, Prerequisites.Tools tools, StudyCertificate certificate) throws IOException {
    if (member.transport().encrypted() != (certificate != null)) {
      throw new IllegalArgumentException(member.name() + ": a certificate goes with DoT and DoH, and only with them");
    }
    this.certificate = certificate;
    this.member = member;
    this.recipe = recipe;
    this.dir = dir.toAbsolutePath();
    this.upstream = upstream;
    this.processes = processes;
    this.tools = tools;
    this.port = LoopbackPort.pick();
    this.encryptedPort = certificate == null ? -1 : LoopbackPort.pick();
  }

  /**
   * The server for a member of any kind; {@code certificate} is the one a member queried over DoT
   * or DoH presents, null for the others.
   */
  public static ServerUnderTest of(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p,
      Prerequisites.Tools tools, Path shoalJar, StudyCertificate certificate) throws IOException {
    return switch (m.kind()) {
      case SHOAL -> new ShoalUnderTest(m, r, dir, upstream, p, tools, shoalJar, m.name(), null, certificate);
      case UNBOUND -> new UnboundPeer(m, r, dir, upstream, p, tools, certificate);
      case KRESD -> new KresdPeer(m, r, dir, upstream, p, tools);
      case DNSMASQ -> new DnsmasqPeer(m, r, dir, upstream, p, tools);
      case PDNS_RECURSOR -> new PdnsRecursorPeer(m, r, dir, upstream, p, tools);
      case KNOTD -> new KnotdDirect(m, r, dir, upstream, p, tools);
    };
  }

  /** Writes configuration files into the member directory. */
  protected abstract void writeConfig() throws IOException;

  /** The command that runs the server in the foreground. */
  protected abstract List<String> command();

  /** Cumulative cache counters now, from the server's own statistics; the raw text goes to {@code audit}. */
  public abstract CacheCounters counters(Path audit) throws StudyException, IOException;

  /**
   * Cumulative counts of queries the server turned away, by reason, from its own statistics (the
   * robustness phases read them before and after each phase); null when the study does not read
   * them for this kind. shoal's come from its metrics instead ({@code shoal_dropped_total}).
   */
  public Map<String, Long> refusalCounters(Path audit) throws StudyException, IOException {
    return null;
  }

  /**
   * How many answers the server holds in its cache now, from its own statistics (the raw text goes
   * to {@code audit}); null for kinds the study cannot count.
   */
  public Long cachedAnswers(Path audit) throws StudyException, IOException {
    return null;
  }

  /** The LMDB sync mode for the CSV, or null when the member has no LMDB cache. */
  public String lmdbSync() {
    return null;
  }

  /** The fill mode (write-behind or write-through) for the CSV, or null for peers. */
  public String runtime() {
    return null;
  }

  /** How many workers (threads, processes) serve queries. */
  public abstract int workers();

  /** A note for the summary about how this member was set up, or an empty string. */
  public String setupNote() {
    return "";
  }

  /** Starts the server and waits until it answers a real query. */
  public void start() throws IOException, StudyException {
    launch();
    awaitAnswer();
  }

  /**
   * Writes the configuration and starts the process without waiting for it; nodes of one member
   * start together, and a cluster node cannot join before the others run.
   */
  public void launch() throws IOException {
    Files.createDirectories(dir);
    writeConfig();
    process = processes.start(command(), dir, log(), environment());
  }

  /** Waits (bounded) until the launched server answers a real query; fails early if it exited. */
  public void awaitAnswer() throws StudyException {
    DnsProbe.awaitAnswer(label(), address(), zoneApex(), Type.SOA, READY_LIMIT, process, log());
    processes.note("# ready: " + label() + " answered a query for " + zoneApex() + " SOA on " + hostPort());
  }

  /** How messages name this server: the member, or the member and node for a node of a group. */
  public String label() {
    return member.name();
  }

  /** True while the launched process runs. */
  public boolean alive() {
    return process != null && process.isAlive();
  }

  /**
   * The processes that serve this member's queries, whose CPU time is its CPU per query: the
   * server process itself unless the member runs more (kresd with kres-cache-gc).
   */
  public List<Long> servingPids() {
    return process == null ? List.of() : List.of(process.pid());
  }

  /** What {@link #servingPids()} are, for the summary: the program names, summed. */
  public String servingProcesses() {
    return Path.of(command().get(0)).getFileName().toString();
  }

  /** False for a member that answers the load itself instead of forwarding to the study's knotd. */
  public boolean forwardsToUpstream() {
    return true;
  }

  /** The process id, for the summary of a kill test; -1 before launch. */
  public long pid() {
    return process == null ? -1 : process.pid();
  }

  /** Kills the server with SIGKILL, as a crash would (the kill test). */
  public void kill() {
    if (process != null) {
      processes.kill(process, label());
    }
  }

  protected Map<String, String> environment() {
    return Map.of();
  }

  /** Stops the server; its exit status, or -1 if it had to be killed. */
  public int stop() {
    return process == null ? 0 : processes.stop(process);
  }

  @Override
  public void close() {
    stop();
  }

  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port);
  }

  public int port() {
    return port;
  }

  /** How dnsperf queries this server. */
  public Transport transport() {
    return member.transport();
  }

  /**
   * The port dnsperf sends the member's queries to: the DNS port for UDP and TCP, the DoT or DoH
   * port for those (readiness is still checked over UDP on {@link #port()}).
   */
  public int queryPort() {
    return transport().encrypted() ? encryptedPort : port;
  }

  /** The server's own directory: configuration, log, data, raw statistics. */
  public Path directory() {
    return dir;
  }

  public Path log() {
    return dir.resolve("server.log");
  }

  protected String hostPort() {
    return "127.0.0.1:" + port;
  }

  protected String upstreamHost() {
    return upstream.getAddress().getHostAddress();
  }

  protected String zoneApex() {
    return recipe.zone().endsWith(".") ? recipe.zone() : recipe.zone() + ".";
  }

  /** The zone without its trailing dot, as most peers' config files write it. */
  protected String zoneName() {
    String z = zoneApex();
    return z.substring(0, z.length() - 1);
  }

  /** A peer setting from the member's config block, or the recipe-derived default. */
  protected long setting(String key, long fallback) {
    return member.config().hasPath(key) ? member.config().getLong(key) : fallback;
  }

  protected boolean flag(String key, boolean fallback) {
    return member.config().hasPath(key) ? member.config().getBoolean(key) : fallback;
  }

  /** Extra lines for the peer's config file, verbatim, from the member's {@code extra} list. */
  protected List<String> extraLines() {
    return member.config().hasPath("extra") ? member.config().getStringList("extra") : List.of();
  }

  /** Threads for multi-threaded peers: one per core unless the member says otherwise. */
  protected int defaultThreads() {
    return Runtime.getRuntime().availableProcessors();
  }
}

package io.shoal.study.server;

import io.shoal.study.host.LoopbackPort;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.scenario.Recipe;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.xbill.DNS.Type;

/**
 * The authoritative upstream of a study: Knot DNS serving the recipe's zone, whose wildcard A
 * record answers every generated name at the recipe's TTL. mod-stats counts the queries it
 * receives, which is how every member's hit rate is measured the same way.
 */
public final class KnotUpstream implements AutoCloseable {
  private static final Pattern QUERIES = Pattern.compile("mod-stats\\.server-operation\\[query\\]\\s*=\\s*(\\d+)");
  private static final Duration READY_LIMIT = Duration.ofSeconds(30);
  private static final Duration KNOTC_LIMIT = Duration.ofSeconds(30);
  /**
   * The file in knotd's directory that holds the DS records of the zone knotd signed (a signed
   * recipe only), in zone-file syntax: the trust anchor validating members are given.
   */
  public static final String TRUST_ANCHOR = "trust-anchor.ds";

  private final Path dir;
  private final Path conf;
  private final int port;
  private final Process process;
  private final StartedProcesses processes;
  private final Prerequisites.Tools tools;
  /** True between {@link #suspend} and {@link #resume}: knotd is stopped and answers nothing. */
  private volatile boolean suspended;

  private KnotUpstream(Path dir, Path conf, int port, Process process, StartedProcesses processes,
      Prerequisites.Tools tools) {
    this.dir = dir;
    this.conf = conf;
    this.port = port;
    this.process = process;
    this.processes = processes;
    this.tools = tools;
  }

  /** Writes knotd's configuration and zone into {@code dir}, starts it and waits until it answers. */
  public static KnotUpstream start(Path dir, Recipe recipe, boolean root, Prerequisites.Tools tools,
      StartedProcesses processes) throws IOException, StudyException {
    int port = LoopbackPort.pick();
    Path conf = writeServerFiles(dir, recipe, port, recipe.upstreamWorkers(), root);
    Path log = dir.resolve("knotd.log");
    Process p = processes.start(List.of(tools.path("knotd"), "-c", conf.toString()), dir, log, Map.of());
    KnotUpstream knot = new KnotUpstream(dir, conf, port, p, processes, tools);
    try {
      DnsProbe.awaitAnswer("knotd", knot.address(), apex(recipe), Type.SOA, READY_LIMIT, p, log);
      if (recipe.signed()) {
        knot.writeTrustAnchor(apex(recipe));
      }
    } catch (StudyException | IOException e) {
      knot.close();
      throw e;
    }
    return knot;
  }

  /**
   * Writes the signed zone's DS records, as {@code keymgr ZONE ds} prints them from the keys knotd
   * generated at start, to {@link #TRUST_ANCHOR}; fails if there are none (the zone is not signed).
   */
  private void writeTrustAnchor(String zone) throws StudyException, IOException {
    Path audit = dir.resolve("keymgr-ds.txt");
    StartedProcesses.Completed c = processes.run(
        List.of(tools.path("keymgr"), "-c", conf.toString(), zone, "ds"), audit, KNOTC_LIMIT);
    List<String> ds = trustAnchorLines(c.output(), zone);
    if (c.exitCode() != 0 || ds.isEmpty()) {
      throw new StudyException("keymgr " + zone + " ds gave no DS record (status " + c.exitCode() + "): "
          + c.output().strip());
    }
    Files.writeString(dir.resolve(TRUST_ANCHOR), String.join("\n", ds) + "\n");
  }

  /** The DS lines of {@code zone} in keymgr's output ("bench.test. DS 20261 13 2 2533..."). */
  public static List<String> trustAnchorLines(String keymgrDs, String zone) {
    return keymgrDs.lines().map(String::strip)
        .filter(l -> l.toLowerCase(java.util.Locale.ROOT).startsWith(zone.toLowerCase(java.util.Locale.ROOT) + " ")
            && l.split("\\s+").length >= 6 && l.split("\\s+")[1].equals("DS"))
        .toList();
  }

  /** The trust anchor file of a signed recipe's knotd, once started; its DS records are in it. */
  public Path trustAnchor() {
    return dir.resolve(TRUST_ANCHOR);
  }

  /** The recipe's zone as an absolute name, with its trailing dot. */
  public static String apex(Recipe recipe) {
    return recipe.zone().endsWith(".") ? recipe.zone() : recipe.zone() + ".";
  }

  /**
   * Writes a knotd that serves the recipe's zone on 127.0.0.1:{@code port} into {@code dir}: the
   * zone (SOA, NS and a wildcard A record at the recipe's TTL; a signed zone has an A record for
   * each queried name instead), a database directory and
   * knot.conf with mod-stats counting queries. A signed recipe's zone is signed by knotd itself
   * (keys generated at start under a policy of the recipe's algorithm, NSEC, no automatic KSK
   * submission). The upstream of every study and the knotd member
   * (knotd answering the load itself) are the same server, so the ceiling serves what the
   * upstream serves. Returns knot.conf's path.
   */
  static Path writeServerFiles(Path dir, Recipe recipe, int port, int udpWorkers, boolean root) throws IOException {
    Files.createDirectories(dir.resolve("db"));
    Path absolute = dir.toAbsolutePath();
    String zone = apex(recipe);
    long ttl = recipe.stubTtl().toSeconds();
    StringBuilder records = new StringBuilder(String.join("\n",
        "$ORIGIN " + zone,
        "$TTL " + ttl,
        "@ SOA ns." + zone + " hostmaster." + zone + " 1 3600 900 604800 " + ttl,
        "@ NS ns." + zone,
        "ns A 127.0.0.1",
        ""));
    if (recipe.signed()) {
      // Each queried name on its own: a wildcard answer carries an NSEC proof, from which a
      // resolver with aggressive use of NSEC (RFC 8198) makes every other name's answer itself,
      // so members would be compared on that setting rather than on validating a miss.
      for (int i = 0; i < recipe.queries().names(); i++) {
        records.append('n').append(i).append(" A 192.0.2.1\n");
      }
    } else {
      records.append("* A 192.0.2.1\n");
    }
    Files.writeString(dir.resolve("zone.db"), records);
    Path conf = dir.resolve("knot.conf");
    Files.writeString(conf, String.join("\n",
        "server:",
        "    rundir: \"" + absolute + "\"",
        "    pidfile: \"" + absolute.resolve("knotd.pid") + "\"",
        "    listen: 127.0.0.1@" + port,
        "    udp-workers: " + udpWorkers,
        "    tcp-workers: 1",
        "    background-workers: 1",
        // knotd drops to the 'knot' user by default, which cannot write a run directory we own.
        root ? "    user: root:root" : "",
        "control:",
        "    listen: \"" + absolute.resolve("knot.sock") + "\"",
        "database:",
        "    storage: \"" + absolute.resolve("db") + "\"",
        "log:",
        "  - target: stderr",
        "    any: notice",
        "mod-stats:",
        "  - id: counts",
        recipe.signed() ? String.join("\n",
            "policy:",
            "  - id: study",
            "    algorithm: " + recipe.signing().algorithm(),
            "    nsec3: off") : "",
        "template:",
        "  - id: default",
        "    storage: \"" + absolute + "\"",
        "    global-module: mod-stats/counts",
        "zone:",
        "  - domain: " + zone,
        "    file: zone.db",
        // the signed zone stays in knotd's journal: zone.db remains the file written above
        recipe.signed() ? "    dnssec-signing: on\n    dnssec-policy: study\n    zonefile-sync: -1" : "",
        ""));
    return conf;
  }

  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port);
  }

  public int port() {
    return port;
  }

  /** knotd's process id. */
  public long pid() {
    return process.pid();
  }

  /** Queries knotd has received so far, by {@code knotc stats}; the output is kept in {@code audit}. */
  public long queryCount(Path audit) throws StudyException {
    StartedProcesses.Completed c = processes.run(
        List.of(tools.path("knotc"), "-c", conf.toString(), "stats"), audit, KNOTC_LIMIT);
    if (c.exitCode() != 0) {
      throw new StudyException("knotc stats failed (status " + c.exitCode() + "): " + c.output().strip());
    }
    return parseQueryCount(c.output());
  }

  /** The query counter in {@code knotc stats} output; 0 when knotd has not counted any yet. */
  public static long parseQueryCount(String knotcStats) {
    Matcher m = QUERIES.matcher(knotcStats);
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  public Path dir() {
    return dir;
  }

  /**
   * Stops knotd with SIGSTOP, as an upstream that hangs: its socket stays open and queries pile
   * up unanswered (no ICMP port unreachable, so a resolver sees timeouts, not refusals). The
   * study started knotd and owns its PID; {@link #close} always resumes it.
   */
  public void suspend(Path audit) throws StudyException {
    suspended = true;
    signal("-STOP", audit);
  }

  /** Resumes knotd after {@link #suspend} with SIGCONT; it then answers what queued meanwhile. */
  public void resume(Path audit) throws StudyException {
    signal("-CONT", audit);
    suspended = false;
  }

  private void signal(String signal, Path audit) throws StudyException {
    StartedProcesses.Completed c = processes.run(
        List.of(Prerequisites.find("kill").map(Path::toString).orElse("kill"), signal, Long.toString(process.pid())),
        audit, KNOTC_LIMIT);
    if (c.exitCode() != 0) {
      throw new StudyException("kill " + signal + " " + process.pid() + " (knotd) failed (status " + c.exitCode()
          + "): " + c.output().strip());
    }
  }

  @Override
  public void close() {
    if (suspended) {
      // a stopped process acts on SIGTERM only once continued; without this, stop() would wait
      // its whole grace period and then SIGKILL knotd
      try {
        resume(dir.resolve("resume-at-close.txt"));
      } catch (StudyException e) {
        // stop() below still ends knotd, with SIGKILL after its grace period
      }
    }
    processes.stop(process);
  }
}

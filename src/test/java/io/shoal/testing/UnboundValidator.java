package io.shoal.testing;

import io.shoal.study.host.LogTail;
import io.shoal.study.host.LoopbackPort;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.xbill.DNS.Type;

/**
 * Unbound with its validator ({@code module-config: "validator iterator"}) as a peer to compare
 * shoal's verdicts with: it forwards each given zone to a server on loopback, validates from the
 * given trust anchor files and sends extended DNS errors ({@code ede: yes}). Runs in the
 * foreground in a temporary directory on a free loopback port; stopped by its PID.
 */
public final class UnboundValidator implements AutoCloseable {
  private static final Duration READY_LIMIT = Duration.ofSeconds(30);

  private final int port;
  private final StartedProcesses processes;

  private UnboundValidator(int port, StartedProcesses processes) {
    this.port = port;
    this.processes = processes;
  }

  /**
   * Starts unbound in {@code dir}: {@code forwards} maps zone names to the "127.0.0.1:port" each is
   * forwarded to, {@code anchors} are files of DS records, {@code extra} are more server: lines
   * (e.g. {@code domain-insecure: "x."} for a negative trust anchor). Returns once it answers
   * a query for
   * {@code probe} SOA (whatever the answer).
   */
  public static UnboundValidator start(Path dir, Map<String, String> forwards, List<Path> anchors, List<String> extra,
      String probe) throws IOException, StudyException {
    Path absolute = dir.toAbsolutePath();
    Files.createDirectories(absolute);
    int port = LoopbackPort.pick();
    List<String> lines = new ArrayList<>(List.of(
        "server:",
        "  interface: 127.0.0.1@" + port,
        "  do-ip6: no",
        "  username: \"\"",
        "  chroot: \"\"",
        "  directory: \"" + absolute + "\"",
        "  pidfile: \"" + absolute.resolve("unbound.pid") + "\"",
        "  use-syslog: no",
        "  logfile: \"\"",
        "  num-threads: 1",
        "  module-config: \"validator iterator\"",
        "  ede: yes",
        "  val-log-level: 2",
        // no queries of its own: no key-tag signalling (RFC 8145), no prefetch
        "  trust-anchor-signaling: no",
        "  prefetch: no",
        // unbound refuses to forward to loopback and blocks test. (RFC 6761) unless told otherwise
        "  do-not-query-localhost: no",
        "  local-zone: \"test.\" nodefault",
        "  qname-minimisation: no"));
    for (Path a : anchors) {
      lines.add("  trust-anchor-file: \"" + a.toAbsolutePath() + "\"");
    }
    extra.forEach(l -> lines.add("  " + l));
    for (Map.Entry<String, String> f : forwards.entrySet()) {
      lines.add("forward-zone:");
      lines.add("  name: \"" + f.getKey() + "\"");
      lines.add("  forward-addr: " + f.getValue().replace(':', '@'));
    }
    lines.add("");
    Path conf = Files.writeString(absolute.resolve("unbound.conf"), String.join("\n", lines));
    Path log = absolute.resolve("unbound.log");
    String unbound = Prerequisites.find("unbound").map(Path::toString)
        .orElseThrow(() -> new StudyException("unbound not found; install the Debian package unbound"));
    StartedProcesses processes = new StartedProcesses();
    Process p = processes.start(List.of(unbound, "-d", "-c", conf.toString()), absolute, log, Map.of());
    UnboundValidator u = new UnboundValidator(port, processes);
    try {
      long deadline = System.nanoTime() + READY_LIMIT.toNanos();
      int tries = 0;
      while (true) {
        if (!p.isAlive()) {
          throw new StudyException("unbound exited with status " + p.exitValue() + LogTail.of(log));
        }
        byte[] reply = DnsClient.udp(u.address(), DnsClient.query(tries, probe, Type.SOA, null).toWire(), 500);
        // any answer will do: it is up (an unbound with a moved validation date answers SERVFAIL)
        if (reply != null) {
          return u;
        }
        if (System.nanoTime() > deadline || ++tries > 10_000) {
          throw new StudyException("unbound did not answer " + probe + " SOA within " + READY_LIMIT.toSeconds() + " s"
              + LogTail.of(log));
        }
        Thread.sleep(50);
      }
    } catch (IOException | StudyException | RuntimeException e) {
      u.close();
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      u.close();
      throw new StudyException("interrupted while unbound started", e);
    }
  }

  public InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", port);
  }

  /** Stops unbound (SIGTERM to its PID, SIGKILL after a bounded wait). */
  @Override
  public void close() {
    processes.close();
  }
}

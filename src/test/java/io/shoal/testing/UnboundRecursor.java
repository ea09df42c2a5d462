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
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Unbound as a recursive validating resolver ({@code module-config: "validator iterator"}) over a
 * tree of authorities on loopback: it starts from the given root hints and root trust anchor file,
 * may query 127.0.0.0/8 ({@code do-not-query-localhost: no}), resolves {@code test.}
 * ({@code local-zone: "test." nodefault}), minimises query names, and does not answer from NSEC
 * ranges ({@code aggressive-nsec: no}, so a cold pass asks the authorities for every name, as the
 * peer it is compared with does). Runs in the foreground in a temporary directory on a free
 * loopback port; stopped by its PID.
 */
public final class UnboundRecursor implements AutoCloseable {
  private static final Duration READY_LIMIT = Duration.ofSeconds(30);

  private final int port;
  private final StartedProcesses processes;
  private final Path log;

  private UnboundRecursor(int port, StartedProcesses processes, Path log) {
    this.port = port;
    this.processes = processes;
    this.log = log;
  }

  /**
   * Starts unbound in {@code dir} from {@code rootHints} and {@code trustAnchor} (DS records),
   * {@code extra} being more server: lines. Returns once it answers a query it answers itself
   * ({@code version.server} CH TXT), so that no query reached the authorities before the caller
   * asks its first.
   */
  public static UnboundRecursor start(Path dir, Path rootHints, Path trustAnchor, List<String> extra)
      throws IOException, StudyException {
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
        "  root-hints: \"" + rootHints.toAbsolutePath() + "\"",
        "  trust-anchor-file: \"" + trustAnchor.toAbsolutePath() + "\"",
        "  ede: yes",
        "  val-log-level: 2",
        // no queries of its own: no key-tag signalling (RFC 8145), no sentinel, no prefetch
        "  trust-anchor-signaling: no",
        "  root-key-sentinel: no",
        "  prefetch: no",
        "  prefetch-key: no",
        // the authorities are on loopback, and test. is blocked (RFC 6761) unless told otherwise
        "  do-not-query-localhost: no",
        "  local-zone: \"test.\" nodefault",
        "  qname-minimisation: yes",
        "  aggressive-nsec: no",
        "  hide-version: no"));
    extra.forEach(l -> lines.add("  " + l));
    lines.add("");
    Path conf = Files.writeString(absolute.resolve("unbound.conf"), String.join("\n", lines));
    Path log = absolute.resolve("unbound.log");
    String unbound = Prerequisites.find("unbound").map(Path::toString)
        .orElseThrow(() -> new StudyException("unbound not found; install the Debian package unbound"));
    StartedProcesses processes = new StartedProcesses();
    Process p = processes.start(List.of(unbound, "-d", "-c", conf.toString()), absolute, log, Map.of());
    UnboundRecursor u = new UnboundRecursor(port, processes, log);
    try {
      long deadline = System.nanoTime() + READY_LIMIT.toNanos();
      int tries = 0;
      while (true) {
        if (!p.isAlive()) {
          throw new StudyException("unbound exited with status " + p.exitValue() + LogTail.of(log));
        }
        Message q = Message.newQuery(Record.newRecord(Name.fromConstantString("version.server."), Type.TXT, DClass.CH));
        q.getHeader().setID(tries & 0xFFFF);
        byte[] reply = DnsClient.udp(u.address(), q.toWire(), 500);
        if (reply != null && !new Message(reply).getSection(Section.ANSWER).isEmpty()) {
          return u;
        }
        if (System.nanoTime() > deadline || ++tries > 10_000) {
          throw new StudyException("unbound did not answer version.server CH TXT within " + READY_LIMIT.toSeconds()
              + " s" + LogTail.of(log));
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

  /** unbound's log (its validator's reasons at val-log-level 2). */
  public Path log() {
    return log;
  }

  /** Stops unbound (SIGTERM to its PID, SIGKILL after a bounded wait). */
  @Override
  public void close() {
    processes.close();
  }
}

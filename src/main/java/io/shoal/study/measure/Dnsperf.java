package io.shoal.study.measure;

import io.shoal.study.host.CpuQuota;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Transport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * dnsperf as a study runs it: one run against one server, several at once (one per node of a
 * member), and the short one-query-at-a-time pass of the remote-lookup probe. Every query goes to
 * 127.0.0.1.
 */
public final class Dnsperf {
  /** dnsperf may outlive -l by its query timeout; beyond this it is stuck. */
  static final Duration SLACK = Duration.ofSeconds(60);

  private final String binary;
  private final StartedProcesses processes;
  /** -D on every query (DO set): a signed recipe's answers come signed, and validated where the member validates. */
  private final List<String> dnssecOk;

  public Dnsperf(Prerequisites.Tools tools, StartedProcesses processes) {
    this(tools, processes, false);
  }

  /** dnsperf that sets DO on every query ({@code -D}) when {@code dnssecOk}. */
  public Dnsperf(Prerequisites.Tools tools, StartedProcesses processes, boolean dnssecOk) {
    this.binary = tools.path("dnsperf");
    this.processes = processes;
    this.dnssecOk = dnssecOk ? List.of("-D") : List.of();
  }

  /**
   * The command of a timed run with the load's window, held to the load's -Q when it is paced;
   * {@code extra} flags go last.
   */
  List<String> command(int port, Path queries, LoadSettings load, Duration duration, List<String> extra) {
    List<String> cmd = new ArrayList<>(List.of(binary, "-s", "127.0.0.1", "-p", Integer.toString(port),
        "-d", queries.toString(), "-c", Integer.toString(load.clients()), "-q", Integer.toString(load.outstanding()),
        "-T", Integer.toString(load.threads()), "-l", Long.toString(Math.max(1, duration.toSeconds()))));
    if (load.maxQps() != null) {
      cmd.addAll(List.of("-Q", Integer.toString(load.maxQps())));
    }
    cmd.addAll(dnssecOk);
    cmd.addAll(extra);
    return cmd;
  }

  /** One timed run against one server over UDP; fails if dnsperf fails or prints no statistics. */
  public DnsperfReport run(int port, Path queries, LoadSettings load, Duration duration, Path output) throws StudyException {
    return run(Transport.UDP, port, queries, load, duration, output);
  }

  /**
   * One timed run against one server over {@code transport} ({@code -m}); DoT and DoH connections
   * are kept for the whole run (dnsperf does not check the certificate).
   */
  public DnsperfReport run(Transport transport, int port, Path queries, LoadSettings load, Duration duration,
      Path output) throws StudyException {
    return DnsperfReport.parse(check(processes.run(command(port, queries, load, duration, mode(transport)), output,
        duration.plus(SLACK))));
  }

  /** dnsperf's flags for {@code transport}: none for UDP, its default. */
  static List<String> mode(Transport transport) {
    return transport == Transport.UDP ? List.of() : List.of("-m", transport.configName());
  }

  /**
   * Timed runs against several servers at once, the i-th with {@code queries.get(i)} into
   * {@code outputs.get(i)}, each with the load's full window; one report per server.
   */
  public List<DnsperfReport> runAtOnce(List<Integer> ports, List<Path> queries, LoadSettings load, Duration duration,
      List<Path> outputs) throws StudyException {
    List<StartedProcesses.Running> running = launchAtOnce(ports, queries, load, duration, List.of(), outputs);
    List<DnsperfReport> reports = new ArrayList<>();
    for (String output : awaitAll(running, duration)) {
      reports.add(DnsperfReport.parse(output));
    }
    return reports;
  }

  /** Starts timed runs against several servers at once, with extra flags; finish with {@link #awaitAll}. */
  public List<StartedProcesses.Running> launchAtOnce(List<Integer> ports, List<Path> queries, LoadSettings load,
      Duration duration, List<String> extra, List<Path> outputs) throws StudyException {
    return launchAtOnce(ports, queries, load, duration, extra, outputs, null);
  }

  /** {@link #launchAtOnce} with every run in {@code group} (null: none), as the capacity study runs them. */
  public List<StartedProcesses.Running> launchAtOnce(List<Integer> ports, List<Path> queries, LoadSettings load,
      Duration duration, List<String> extra, List<Path> outputs, CpuQuota group) throws StudyException {
    List<StartedProcesses.Running> running = new ArrayList<>();
    for (int i = 0; i < ports.size(); i++) {
      List<String> cmd = command(ports.get(i), queries.get(i), load, duration, extra);
      running.add(processes.launch(group == null ? cmd : group.wrap(cmd), outputs.get(i)));
    }
    return running;
  }

  /** Waits for runs started together with -l {@code duration}; their outputs, in order. */
  public List<String> awaitAll(List<StartedProcesses.Running> running, Duration duration) throws StudyException {
    long deadline = System.nanoTime() + duration.plus(SLACK).toNanos();
    List<String> outputs = new ArrayList<>();
    StudyException first = null;
    // Await every run even after one failed, so none is left running.
    for (StartedProcesses.Running r : running) {
      try {
        outputs.add(check(processes.await(r, deadline)));
      } catch (StudyException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
    return outputs;
  }

  /**
   * One pass over {@code queries}, one query at a time (-c 1 -q 1 -n 1): the latency of single
   * queries on an otherwise idle server.
   */
  public DnsperfReport onePass(int port, Path queries, Path output) throws StudyException {
    List<String> cmd = new ArrayList<>(List.of(binary, "-s", "127.0.0.1", "-p", Integer.toString(port),
        "-d", queries.toString(), "-c", "1", "-q", "1", "-T", "1", "-n", "1"));
    cmd.addAll(dnssecOk);
    return DnsperfReport.parse(check(processes.run(cmd, output, SLACK)));
  }

  /**
   * One pass over {@code queries} at most {@code qps} queries a second (-n 1 -Q): a slow fill that
   * spreads the answers' arrival, and so their expiry, over the pass.
   */
  public DnsperfReport paced(int port, Path queries, int qps, Duration expected, Path output) throws StudyException {
    List<String> cmd = new ArrayList<>(List.of(binary, "-s", "127.0.0.1", "-p", Integer.toString(port),
        "-d", queries.toString(), "-c", "1", "-q", "10", "-T", "1", "-n", "1", "-Q", Integer.toString(qps)));
    cmd.addAll(dnssecOk);
    return DnsperfReport.parse(check(processes.run(cmd, output, expected.plus(SLACK))));
  }

  /**
   * Starts one pass over {@code queries} at most {@code qps} queries a second with up to
   * {@code outstanding} in flight (-n 1 -Q -q): a fill that asks each name of the file once and,
   * held below what the server answers, loses none. Finish with {@link #awaitPass}.
   */
  public StartedProcesses.Running launchPass(int port, Path queries, int qps, int outstanding, Path output)
      throws StudyException {
    List<String> cmd = new ArrayList<>(List.of(binary, "-s", "127.0.0.1", "-p", Integer.toString(port),
        "-d", queries.toString(), "-c", "1", "-q", Integer.toString(outstanding), "-T", "1", "-n", "1",
        "-Q", Integer.toString(qps)));
    cmd.addAll(dnssecOk);
    return processes.launch(cmd, output);
  }

  /**
   * Starts one pass over {@code queries} as fast as answers come with up to {@code outstanding} in
   * flight (-n 1 -q), stopped at {@code limit} (-l) if it has not ended, with a line per query (-v)
   * for latency percentiles: each name of the file asked once. Finish with {@link #awaitAll}.
   */
  public StartedProcesses.Running launchOnce(int port, Path queries, int outstanding, Duration limit, Path output)
      throws StudyException {
    List<String> cmd = new ArrayList<>(List.of(binary, "-s", "127.0.0.1", "-p", Integer.toString(port),
        "-d", queries.toString(), "-c", "1", "-q", Integer.toString(outstanding), "-T", "1", "-n", "1",
        "-l", Long.toString(Math.max(1, limit.toSeconds())), "-v"));
    cmd.addAll(dnssecOk);
    return processes.launch(cmd, output);
  }

  /** Waits for a pass started by {@link #launchPass} expected to take {@code expected}; its report. */
  public DnsperfReport awaitPass(StartedProcesses.Running pass, Duration expected) throws StudyException {
    return DnsperfReport.parse(awaitAll(List.of(pass), expected).get(0));
  }

  private static String check(StartedProcesses.Completed c) throws StudyException {
    if (c.exitCode() != 0) {
      throw new StudyException("dnsperf exited with status " + c.exitCode() + ": " + firstLine(c.output()));
    }
    return c.output();
  }

  private static String firstLine(String s) {
    String t = s.strip();
    int nl = t.indexOf('\n');
    return nl < 0 ? t : t.substring(0, nl) + " ...";
  }
}

package io.shoal.study.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Every process a study starts, so each can be stopped by its own PID: in order when the study
 * ends, and from a JVM shutdown hook when it is interrupted (Ctrl-C, SIGTERM). It also keeps the
 * exact command lines, which the summary reports.
 */
public final class StartedProcesses implements AutoCloseable {

  /** A command that ran to its end: its exit status and everything it printed. */
  public record Completed(int exitCode, String output) {}

  /**
   * How long a process has after SIGTERM. A shoal cluster node's orderly stop may take most of
   * Kubernetes' default 30 s (its lameduck, then handing its answers over, at most 10 s, then
   * leaving the cluster): with 10 s here, a node handing over 15,000 answers on a busy host was
   * killed and reported as exiting with 137.
   */
  private static final Duration STOP_GRACE = Duration.ofSeconds(35);

  private final Set<Process> live = ConcurrentHashMap.newKeySet();
  private final List<String> commands = Collections.synchronizedList(new ArrayList<>());
  private final Thread hook = new Thread(this::stopAll, "study-cleanup");
  /** Set once cleanup began: a process started after that would outlive the study. */
  private volatile boolean stopping;

  public StartedProcesses() {
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Starts a long-running process with stdout and stderr going to {@code log}. */
  public Process start(List<String> command, Path workDir, Path log, Map<String, String> env) throws IOException {
    refuseWhenStopping(command);
    record(command);
    ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile())
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().putAll(env);
    return track(pb.start());
  }

  /** Starts a process that shares this terminal (its output is the user's to read). */
  public Process startAttached(List<String> command, Map<String, String> env) throws IOException {
    refuseWhenStopping(command);
    record(command);
    ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
    pb.environment().putAll(env);
    return track(pb.start());
  }

  /** A command started with {@link #launch} that has not been awaited yet. */
  public record Running(List<String> command, Process process, Path output) {}

  /**
   * Runs a command to its end, at most {@code limit}; its output goes to {@code output} and is
   * returned. A command still running at the limit is killed and reported as a failure.
   */
  public Completed run(List<String> command, Path output, Duration limit) throws StudyException {
    Running r = launch(command, output);
    return await(r, System.nanoTime() + limit.toNanos());
  }

  /**
   * Starts a command that will run to its end, its output going to {@code output}; several can
   * run at once (one dnsperf per node). Finish each with {@link #await}.
   */
  public Running launch(List<String> command, Path output) throws StudyException {
    try {
      refuseWhenStopping(command);
    } catch (IOException e) {
      throw new StudyException(e.getMessage(), e);
    }
    record(command);
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
    } catch (IOException e) {
      throw new StudyException("cannot run " + command.get(0) + ": " + e.getMessage(), e);
    }
    return new Running(command, track(p), output);
  }

  /**
   * Waits for a launched command until {@code deadlineNanos} ({@link System#nanoTime()} scale);
   * one still running then is killed and reported as a failure.
   */
  public Completed await(Running r, long deadlineNanos) throws StudyException {
    Process p = r.process();
    try {
      if (!p.waitFor(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        stop(p);
        throw new StudyException(shellQuoted(r.command()) + " did not finish in time");
      }
      return new Completed(p.exitValue(), Files.readString(r.output(), StandardCharsets.UTF_8));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop(p);
      throw new StudyException("interrupted while running " + r.command().get(0), e);
    } catch (IOException e) {
      throw new StudyException("cannot read the output of " + r.command().get(0) + ": " + e.getMessage(), e);
    } finally {
      live.remove(p);
    }
  }

  /**
   * Kills one process we started with SIGKILL, by its PID, as a crash would: no shutdown hooks, no
   * goodbye to the other cluster nodes. Waits (bounded) until it is gone; the kill is noted in the
   * command record.
   */
  public void kill(Process p, String what) {
    note("# SIGKILL pid " + p.pid() + " (" + what + ")");
    // On Linux Process.destroyForcibly sends SIGKILL to exactly this PID.
    p.destroyForcibly();
    try {
      p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    live.remove(p);
  }

  private void refuseWhenStopping(List<String> command) throws IOException {
    if (stopping) {
      throw new IOException("the study is stopping; not starting " + command.get(0));
    }
  }

  /** Adds a started process; if cleanup began meanwhile, the process is stopped at once. */
  private Process track(Process p) {
    live.add(p);
    if (stopping) {
      p.destroyForcibly();
    }
    return p;
  }

  /** Stops one process: SIGTERM, then SIGKILL (with anything it started) after a bounded wait. */
  public int stop(Process p) {
    p.destroy();
    try {
      if (!p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
    }
    live.remove(p);
    return p.isAlive() ? -1 : p.exitValue();
  }

  /** The command lines run so far, shell-quoted, in order. */
  public List<String> commands() {
    synchronized (commands) {
      return List.copyOf(commands);
    }
  }

  /** Adds a line to the command record for a step run in-process (the DNS readiness probes). */
  public void note(String line) {
    commands.add(line);
  }

  private void record(List<String> command) {
    commands.add(shellQuoted(command));
  }

  private void stopAll() {
    stopping = true;
    // Stop all at once (each gets SIGTERM), then wait: shutting down one by one would make an
    // interrupted study take the sum of every grace period.
    List<Process> running = new ArrayList<>(live);
    running.forEach(Process::destroy);
    long deadline = System.nanoTime() + STOP_GRACE.toNanos();
    for (Process p : running) {
      try {
        p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (p.isAlive()) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
      }
      live.remove(p);
    }
  }

  @Override
  public void close() {
    stopAll();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException alreadyShuttingDown) {
      // the hook is running or ran; nothing left to do
    }
  }

  /** A command line as one would type it in a POSIX shell. */
  public static String shellQuoted(List<String> command) {
    return command.stream().map(StartedProcesses::quote).collect(Collectors.joining(" "));
  }

  private static String quote(String arg) {
    if (!arg.isEmpty() && arg.matches("[A-Za-z0-9_./:=@%+,-]+")) {
      return arg;
    }
    return "'" + arg.replace("'", "'\"'\"'") + "'";
  }
}

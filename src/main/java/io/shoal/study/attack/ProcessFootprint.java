package io.shoal.study.attack;

import io.shoal.study.measure.ResidentSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * The most memory and descriptors a process held while it was watched: its resident set
 * ({@code VmRSS} in /proc/PID/status) and the entries of /proc/PID/fd, read by one thread of the
 * study every {@link #EVERY} until closed.
 */
public final class ProcessFootprint implements AutoCloseable {
  public static final Duration EVERY = Duration.ofMillis(250);

  private final Path proc;
  private final Thread thread;
  private volatile boolean closed;
  private volatile long maxRssKib = -1;
  private volatile long maxFds = -1;
  private volatile long samples;

  private ProcessFootprint(long pid) {
    this.proc = Path.of("/proc", Long.toString(pid));
    this.thread = new Thread(this::watch, "study-footprint-" + pid);
    thread.setDaemon(true);
  }

  /** Starts watching {@code pid}; the first sample is taken before this returns. */
  static ProcessFootprint watch(long pid) {
    ProcessFootprint f = new ProcessFootprint(pid);
    f.sample();
    f.thread.start();
    return f;
  }

  private void watch() {
    while (!closed) {
      try {
        Thread.sleep(EVERY.toMillis());
      } catch (InterruptedException e) {
        return;
      }
      sample();
    }
  }

  private void sample() {
    long rss = ResidentSet.kib(proc);
    long fds = fdCount(proc);
    if (rss >= 0) {
      maxRssKib = Math.max(maxRssKib, rss);
    }
    if (fds >= 0) {
      maxFds = Math.max(maxFds, fds);
    }
    samples++;
  }

  /** Open descriptors (entries of fd/) of a /proc/PID directory; -1 if unreadable. */
  static long fdCount(Path procPid) {
    try (Stream<Path> fds = Files.list(procPid.resolve("fd"))) {
      return fds.count();
    } catch (IOException e) {
      return -1;
    }
  }

  /** The largest resident set seen, in MiB; null if no sample was read. */
  Double maxRssMib() {
    return maxRssKib < 0 ? null : maxRssKib / 1024.0;
  }

  /** The most open descriptors seen; null if no sample was read. */
  Long maxFds() {
    return maxFds < 0 ? null : maxFds;
  }

  long samples() {
    return samples;
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    Attack.awaitEnd(thread);
  }
}

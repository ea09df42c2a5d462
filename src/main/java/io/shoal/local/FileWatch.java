package io.shoal.local;

import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.DispatcherSelector;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * Polls files' modification times and sizes and runs a reload when any changed: cheaper and more
 * portable than inotify, and a file replaced by a rename (how editors and list updaters write) is
 * seen like one written in place.
 */
public final class FileWatch {
  /** How often the files are looked at. */
  public static final Duration INTERVAL = Duration.ofSeconds(2);

  private final List<Path> files;
  private final Runnable reload;
  private long[] stamps;

  /** Takes the files' stamps now: create it before the first read, so a change during that read is seen. */
  public FileWatch(List<Path> files, Runnable reload) {
    this.files = List.copyOf(files);
    this.reload = reload;
    this.stamps = stamps();
  }

  /** Runs the reload if a file changed since the last look; true if it did. */
  public synchronized boolean poll() {
    long[] now = stamps();
    if (Arrays.equals(now, stamps)) {
      return false;
    }
    stamps = now;
    try {
      reload.run();
    } catch (Throwable e) {
      // A scheduled task that throws is never run again: the next edit must still be seen.
      org.slf4j.LoggerFactory.getLogger(FileWatch.class).warn("reading {} again failed: {}", files, e.toString());
    }
    return true;
  }

  /** Whether a file changed since the last look (without reloading). */
  public synchronized boolean changed() {
    return !Arrays.equals(stamps(), stamps);
  }

  /** Polls every {@link #INTERVAL} on {@code system}'s dispatcher for blocking work, until the system stops. */
  public Cancellable start(ActorSystem<?> system) {
    return system.scheduler().scheduleWithFixedDelay(INTERVAL, INTERVAL, this::poll,
        system.dispatchers().lookup(DispatcherSelector.blocking()));
  }

  private long[] stamps() {
    long[] s = new long[files.size() * 2];
    for (int i = 0; i < files.size(); i++) {
      try {
        BasicFileAttributes a = Files.readAttributes(files.get(i), BasicFileAttributes.class);
        s[2 * i] = a.lastModifiedTime().toMillis();
        s[2 * i + 1] = a.size();
      } catch (IOException e) {
        s[2 * i] = -1; // gone for now: its reappearance is a change
      }
    }
    return s;
  }

  /** Why a file could not be read, for an operator: the JDK's message for a missing file is only its path. */
  public static String reason(IOException e) {
    if (e instanceof java.nio.file.NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "permission denied";
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}

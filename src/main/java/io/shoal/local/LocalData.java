package io.shoal.local;

import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import io.shoal.config.InvalidConfigException;
import io.shoal.metrics.ReloadMetrics;
import io.shoal.reload.ConfigReload;
import io.shoal.wire.DnsQuery;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers from local data ({@code shoal.local}), consulted before the policy and the cache on the
 * thread that read the query: one read of the current {@link LocalTable}, which a reload replaces
 * whole, so the hit path takes no lock.
 */
public final class LocalData {
  private static final Logger log = LoggerFactory.getLogger(LocalData.class);

  private final LocalSettings settings;
  private final AtomicReference<LocalTable> table = new AtomicReference<>(LocalTable.EMPTY);
  private final FileWatch watch;
  private volatile Cancellable watching;
  private volatile ReloadMetrics reloads;
  private volatile boolean failedRead;

  private LocalData(LocalSettings settings) {
    this.settings = settings;
    this.watch = new FileWatch(settings.hostsFiles(), this::reload);
  }

  /**
   * Reads the hosts files and builds the first table; null when nothing local is configured (the
   * query path then costs a null check).
   *
   * @throws InvalidConfigException naming the key, the file and the line of what is wrong
   */
  public static LocalData load(LocalSettings settings) {
    if (!settings.configured()) {
      return null;
    }
    LocalData local = new LocalData(settings);
    local.replace(LocalTable.load(settings));
    return local;
  }

  /** The reply from local data, or null to resolve the query as usual. */
  public byte[] answer(DnsQuery query, int sizeLimit) {
    return table.get().answer(query, sizeLimit);
  }

  /** Makes {@code next} the table every following query is answered from. */
  public void replace(LocalTable next) {
    table.set(next);
  }

  public LocalTable current() {
    return table.get();
  }

  /**
   * Reloads the table when a hosts file changes, while {@code system} runs; each such reload is
   * reported to {@code reloads}.
   */
  public void watch(ActorSystem<?> system, ReloadMetrics reloads) {
    this.reloads = reloads;
    if (!settings.hostsFiles().isEmpty()) {
      watching = watch.start(system);
    }
  }

  /** The settings this was loaded from: a reload with the same ones keeps it. */
  public LocalSettings settings() {
    return settings;
  }

  /** Stops watching the files (a reload replaced this). */
  public void close() {
    Cancellable w = watching;
    if (w != null) {
      w.cancel();
    }
  }

  /**
   * Whether a hosts file changed since it was read, or its last reading was refused: a
   * configuration reload then reads the files again, and is refused if they still do not load.
   */
  public boolean needsReading() {
    return failedRead || watch.changed();
  }

  /** Reads everything again; a file that is now bad leaves the current table in place. */
  void reload() {
    boolean applied = false;
    try {
      LocalTable next = LocalTable.load(settings);
      replace(next);
      log.info("local data reloaded: {} names", next.names());
      applied = true;
    } catch (Throwable e) { // an OutOfMemoryError building the new table too: the old one stays whole
      log.warn("local data not reloaded, still answering from the previous files: {}", ConfigReload.reason(e));
    }
    failedRead = !applied;
    ReloadMetrics r = reloads;
    if (r != null) {
      if (applied) {
        r.applied();
      } else {
        r.refused();
      }
    }
  }

  /** Polls the hosts files once (tests, instead of waiting for the schedule). */
  boolean pollFiles() {
    return watch.poll();
  }
}

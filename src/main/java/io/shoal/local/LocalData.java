package io.shoal.local;

import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import io.shoal.config.InvalidConfigException;
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

  /** Reloads the table when a hosts file changes, while {@code system} runs. */
  public void watch(ActorSystem<?> system) {
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

  /** Reads everything again; a file that is now bad leaves the current table in place. */
  void reload() {
    try {
      LocalTable next = LocalTable.load(settings);
      replace(next);
      log.info("local data reloaded: {} names", next.names());
    } catch (InvalidConfigException e) {
      log.warn("local data not reloaded, still answering from the previous files: {}", e.getMessage());
    }
  }

  /** Polls the hosts files once (tests, instead of waiting for the schedule). */
  boolean pollFiles() {
    return watch.poll();
  }
}

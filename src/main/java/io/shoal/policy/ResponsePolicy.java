package io.shoal.policy;

import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import io.shoal.config.InvalidConfigException;
import io.shoal.local.FileWatch;
import io.shoal.metrics.PolicyMetrics;
import io.shoal.metrics.ReloadMetrics;
import io.shoal.reload.ConfigReload;
import io.shoal.wire.DnsQuery;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The response policy ({@code shoal.policy}): RPZ files and domain lists, consulted after local
 * data and before the cache, on the thread that read the query, from the current {@link
 * PolicyTable} (one atomic read; a reload replaces it whole, so the hit path takes no lock). The
 * RPZ part and the lists part are reloaded separately when their files change, so a changed RPZ
 * file does not make a million-name list load again.
 */
public final class ResponsePolicy {
  /** The reply that means: send nothing (the DROP action). Compare by identity. */
  public static final byte[] DROP = new byte[0];

  private static final Logger log = LoggerFactory.getLogger(ResponsePolicy.class);

  private final PolicySettings settings;
  private final PolicyMetrics metrics;
  private final AtomicReference<PolicyTable> table = new AtomicReference<>(PolicyTable.EMPTY);
  private final FileWatch rpzWatch;
  private final FileWatch listWatch;
  private final List<Cancellable> watching = new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile ReloadMetrics reloads;
  private volatile boolean failedRead;

  private ResponsePolicy(PolicySettings settings, PolicyMetrics metrics) {
    this.settings = settings;
    this.metrics = metrics;
    this.rpzWatch = new FileWatch(settings.rpzFiles(), this::reloadRpz);
    this.listWatch = new FileWatch(settings.domainLists().stream().map(PolicySettings.DomainList::file).toList(),
        this::reloadLists);
  }

  /**
   * Reads every file and builds the first table; null when no policy is configured (the query
   * path then costs a null check).
   *
   * @throws InvalidConfigException naming the key, the file and the line of what is wrong
   */
  public static ResponsePolicy load(PolicySettings settings, PolicyMetrics metrics) {
    if (!settings.configured()) {
      return null;
    }
    ResponsePolicy policy = new ResponsePolicy(settings, metrics);
    PolicyTable.Rpz rpz = PolicyTable.Rpz.load(settings.rpzFiles(), metrics, settings.limits());
    PolicyTable.Lists lists = PolicyTable.Lists.load(settings.domainLists(), metrics, settings.limits());
    policy.replace(new PolicyTable(rpz, lists));
    log.info("response policy: {} RPZ triggers from {} files, {} names from {} domain lists", rpz.names().size(),
        settings.rpzFiles().size(), lists.names().size(), settings.domainLists().size());
    return policy;
  }

  /**
   * The reply the policy gives {@code query}: null when no rule matches or one lets it through
   * (resolve it as usual), {@link #DROP} when it gets no reply. Counted in
   * shoal_policy_hits_total{list,action}.
   */
  public byte[] answer(DnsQuery query, int sizeLimit) {
    Rule rule = table.get().match(query.packet());
    if (rule == null) {
      return null;
    }
    rule.hits().increment();
    return rule.reply(query, sizeLimit);
  }

  /** Makes {@code next} the table every following query is checked against. */
  public void replace(PolicyTable next) {
    table.set(next);
  }

  public PolicyTable current() {
    return table.get();
  }

  /**
   * Reloads a part when one of its files changes, while {@code system} runs; each such reload is
   * reported to {@code reloads} (a refused one sets shoal_config_last_reload_successful to 0).
   */
  public void watch(ActorSystem<?> system, ReloadMetrics reloads) {
    this.reloads = reloads;
    if (!settings.rpzFiles().isEmpty()) {
      watching.add(rpzWatch.start(system));
    }
    if (!settings.domainLists().isEmpty()) {
      watching.add(listWatch.start(system));
    }
  }

  /**
   * Whether a file changed since it was read, or the last reading of one was refused: a
   * configuration reload then reads the files again, and is refused if they still do not load.
   */
  public boolean needsReading() {
    return failedRead || rpzWatch.changed() || listWatch.changed();
  }

  /** The settings this was loaded from: a reload with the same ones keeps it. */
  public PolicySettings settings() {
    return settings;
  }

  /** Stops watching the files (a reload replaced this). */
  public void close() {
    watching.forEach(Cancellable::cancel);
  }

  synchronized void reloadRpz() {
    try {
      PolicyTable.Rpz rpz = PolicyTable.Rpz.load(settings.rpzFiles(), metrics, settings.limits());
      replace(new PolicyTable(rpz, table.get().lists));
      log.info("RPZ files reloaded: {} triggers", rpz.names().size());
      reported(true);
    } catch (Throwable e) { // an OutOfMemoryError building the new table too: the old one stays whole
      log.warn("RPZ files not reloaded, still applying the previous ones: {}", ConfigReload.reason(e));
      reported(false);
    }
  }

  synchronized void reloadLists() {
    try {
      PolicyTable.Lists lists = PolicyTable.Lists.load(settings.domainLists(), metrics, settings.limits());
      replace(new PolicyTable(table.get().rpz, lists));
      log.info("domain lists reloaded: {} names", lists.names().size());
      reported(true);
    } catch (Throwable e) { // an OutOfMemoryError building the new table too: the old one stays whole
      log.warn("domain lists not reloaded, still applying the previous ones: {}", ConfigReload.reason(e));
      reported(false);
    }
  }

  private void reported(boolean applied) {
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

  /** Polls the files once (tests, instead of waiting for the schedule); true if something was reloaded. */
  boolean pollFiles() {
    return rpzWatch.poll() | listWatch.poll();
  }

  /** The files this policy reads, for logging. */
  List<Path> files() {
    List<Path> all = new java.util.ArrayList<>(settings.rpzFiles());
    settings.domainLists().forEach(l -> all.add(l.file()));
    return all;
  }
}

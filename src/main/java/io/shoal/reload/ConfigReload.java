package io.shoal.reload;

import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import io.shoal.config.ConfigSource;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import io.shoal.local.FileWatch;
import io.shoal.metrics.ReloadMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reload without a restart: reads the configuration again (on SIGHUP, {@code shoal reload}, or a
 * change of the watched {@code --config} file), checks it whole, and has the node apply it. What
 * a node applies live is listed in {@link #LIVE}; a new config that changes anything else (listen
 * addresses, caches, the cluster, Akka's own settings) is refused whole, naming those keys, and so
 * is one that does not validate or whose files cannot be read. A refused reload changes nothing:
 * the node goes on with the config it runs. The cache, the sockets and the cluster membership
 * stay either way.
 */
public final class ConfigReload {
  private static final Logger log = LoggerFactory.getLogger(ConfigReload.class);

  /** The {@code shoal} keys a running node applies. */
  public static final Set<String> LIVE = Set.of(
      "upstreams", "profiles", "access_control", "rate_limit", "miss_budget", "chaos", "serve_stale", "prefetch", "local", "policy",
      "dnssec", "log", "files");

  /** The top-level blocks besides {@code shoal} that shoal reads; the others are the JVM's system properties. */
  private static final List<String> OTHER_BLOCKS = List.of("akka", "kamon");

  /** What a reload did, and a line that says so (logged, and returned to {@code shoal reload}). */
  public record Outcome(boolean applied, String message) {}

  /** The node's side of a reload. */
  public interface Target {
    /**
     * Applies {@code next}, which validated and changes no restart key; {@code changed} lists the
     * {@code shoal} keys that differ (empty: the files it names may have changed all the same).
     *
     * @throws InvalidConfigException naming the key when something it names cannot be used (a
     *     file that does not parse); nothing was changed then
     */
    void apply(ShoalConfig next, List<String> changed);
  }

  private final ConfigSource source;
  private final Target target;
  private final ReloadMetrics metrics;
  private Config running;

  /** @param running the configuration the node started with */
  public ConfigReload(ConfigSource source, Config running, Target target, ReloadMetrics metrics) {
    this.source = source;
    this.running = running;
    this.target = target;
    this.metrics = metrics;
  }

  /** Reads the source again and applies it; {@code trigger} says who asked, for the log. */
  public synchronized Outcome reload(String trigger) {
    Config candidate;
    try {
      candidate = source.load();
    } catch (Throwable e) {
      return refused(trigger, reason(e));
    }
    return reload(trigger, candidate);
  }

  /** Applies {@code candidate}, a resolved configuration as {@link io.shoal.config.ConfigLoader} makes them. */
  public synchronized Outcome reload(String trigger, Config candidate) {
    ShoalConfig next;
    try {
      next = ShoalConfig.forRunningNode(candidate);
    } catch (Throwable e) {
      return refused(trigger, reason(e));
    }
    List<String> restart = restartKeys(running, candidate);
    if (!restart.isEmpty()) {
      return refused(trigger, "changing " + String.join(", ", restart)
          + " needs a restart; nothing of the new configuration was applied");
    }
    List<String> changed = liveChanges(running, candidate);
    try {
      target.apply(next, changed);
    } catch (Throwable e) {
      // Anything, an OutOfMemoryError while a new table was built included: the new plan was not
      // made current, so the node runs on as before, and the reload is reported refused.
      return refused(trigger, reason(e));
    }
    running = candidate;
    metrics.applied();
    String message = changed.isEmpty()
        ? "configuration reloaded: no key changed" : "configuration reloaded: " + String.join(", ", changed) + " applied";
    log.info("{} ({})", message, trigger);
    return new Outcome(true, message);
  }

  /**
   * Reloads when the {@code --config} file changes (it is looked at every {@link
   * FileWatch#INTERVAL}), as Kubernetes updates a mounted ConfigMap; null when there is no file.
   */
  public Cancellable watch(ActorSystem<?> system) {
    if (source.file().isEmpty()) {
      return null;
    }
    return new FileWatch(List.of(source.file().get()), () -> reload("the configuration file changed")).start(system);
  }

  /**
   * Why a reload (or a watched file's reading) failed, in one line: a configuration error's own
   * message (key, file, line), else what was thrown, never its stack.
   */
  public static String reason(Throwable e) {
    if (e instanceof InvalidConfigException) {
      return e.getMessage();
    }
    if (e instanceof OutOfMemoryError) {
      return "out of memory while reading the new configuration's files (a larger heap, -Xmx, or lower"
          + " shoal.files.max_entries and max_bytes)";
    }
    if (e instanceof StackOverflowError) {
      return "the stack overflowed while reading the new configuration's files";
    }
    return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
  }

  private Outcome refused(String trigger, String reason) {
    metrics.refused();
    String message = "configuration not reloaded, still running the previous one: " + reason;
    log.warn("{} ({})", message, trigger);
    return new Outcome(false, message);
  }

  /** The keys that differ between {@code before} and {@code after} and need a restart to change. */
  static List<String> restartKeys(Config before, Config after) {
    List<String> keys = new ArrayList<>();
    for (String block : OTHER_BLOCKS) {
      if (!Objects.equals(before.root().get(block), after.root().get(block))) {
        keys.add(block);
      }
    }
    ConfigObject b = shoal(before);
    ConfigObject a = shoal(after);
    for (String key : union(b, a)) {
      if (!LIVE.contains(key) && !Objects.equals(b.get(key), a.get(key))) {
        keys.add("shoal." + key);
      }
    }
    return keys;
  }

  /** The live keys that differ. */
  static List<String> liveChanges(Config before, Config after) {
    ConfigObject b = shoal(before);
    ConfigObject a = shoal(after);
    List<String> keys = new ArrayList<>();
    for (String key : union(b, a)) {
      if (LIVE.contains(key) && !Objects.equals(b.get(key), a.get(key))) {
        keys.add("shoal." + key);
      }
    }
    return keys;
  }

  private static ConfigObject shoal(Config c) {
    return c.getObject("shoal");
  }

  private static Set<String> union(ConfigObject a, ConfigObject b) {
    Set<String> keys = new TreeSet<>(a.keySet());
    keys.addAll(b.keySet());
    return keys;
  }
}

package io.shoal.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValueType;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * One object of the configuration, read with the full key path in every error, so an operator
 * sees {@code shoal.caches.answers.when_full} rather than a stack trace.
 */
final class Section {
  private final Config config;
  private final String path;

  Section(Config config, String path) {
    this.config = config;
    this.path = path;
  }

  String key(String name) {
    return path + "." + name;
  }

  Section section(String name) {
    try {
      return new Section(config.getConfig(name), key(name));
    } catch (ConfigException.Missing e) {
      throw new InvalidConfigException(key(name), "missing");
    } catch (ConfigException.WrongType e) {
      throw new InvalidConfigException(key(name), "must be an object { ... }");
    }
  }

  boolean has(String name) {
    return config.hasPath(name);
  }

  /** Names of the direct children, in a stable order. */
  Set<String> children() {
    return new TreeSet<>(config.root().keySet());
  }

  /** Rejects keys nobody reads: a typo must not silently fall back to a default. */
  void allowOnly(String... names) {
    Set<String> known = new LinkedHashSet<>(Arrays.asList(names));
    for (String child : children()) {
      if (!known.contains(child)) {
        throw new InvalidConfigException(
            key(child), "unknown key; known keys here: " + String.join(", ", known));
      }
    }
  }

  String string(String name) {
    try {
      if (config.getValue(name).valueType() == ConfigValueType.OBJECT
          || config.getValue(name).valueType() == ConfigValueType.LIST) {
        throw new InvalidConfigException(key(name), "must be a single value");
      }
      return config.getString(name).trim();
    } catch (ConfigException.Missing e) {
      throw new InvalidConfigException(key(name), "missing");
    }
  }

  List<String> strings(String name) {
    try {
      return config.getStringList(name);
    } catch (ConfigException.Missing e) {
      throw new InvalidConfigException(key(name), "missing");
    } catch (ConfigException.WrongType e) {
      throw new InvalidConfigException(key(name), "must be a list of strings [\"...\", ...]");
    }
  }

  boolean bool(String name) {
    try {
      return config.getBoolean(name);
    } catch (ConfigException.Missing e) {
      throw new InvalidConfigException(key(name), "missing");
    } catch (ConfigException.WrongType e) {
      throw new InvalidConfigException(key(name), "must be on or off, got '" + raw(name) + "'");
    }
  }

  long integer(String name, long min, long max) {
    long v;
    try {
      v = config.getLong(name);
    } catch (ConfigException.Missing e) {
      throw new InvalidConfigException(key(name), "missing");
    } catch (ConfigException.WrongType e) {
      throw new InvalidConfigException(key(name), "must be a whole number, got '" + raw(name) + "'");
    }
    if (v < min || v > max) {
      throw new InvalidConfigException(
          key(name), "must be between " + min + " and " + max + ", got " + v);
    }
    return v;
  }

  long bytes(String name, long min, long max) {
    long v;
    try {
      v = config.getBytes(name);
    } catch (ConfigException.Missing e) {
      throw new InvalidConfigException(key(name), "missing");
    } catch (ConfigException.BadValue | ConfigException.WrongType e) {
      throw new InvalidConfigException(
          key(name), "must be a size such as 512MiB or 1GiB, got '" + raw(name) + "'");
    }
    if (v < min || v > max) {
      throw new InvalidConfigException(
          key(name), "must be between " + min + " and " + max + " bytes, got " + v);
    }
    return v;
  }

  Duration duration(String name, Duration min, Duration max) {
    Duration v;
    try {
      v = config.getDuration(name);
    } catch (ConfigException.Missing e) {
      throw new InvalidConfigException(key(name), "missing");
    } catch (ConfigException.BadValue | ConfigException.WrongType e) {
      throw new InvalidConfigException(
          key(name), "must be a duration such as 500ms, 2s or 1d, got '" + raw(name) + "'");
    }
    if (v.compareTo(min) < 0 || v.compareTo(max) > 0) {
      throw new InvalidConfigException(
          key(name), "must be between " + show(min) + " and " + show(max) + ", got " + show(v));
    }
    return v;
  }

  /** One of a fixed set of words, matched exactly. */
  <E extends Enum<E>> E choice(String name, Class<E> type, Function<E, String> configName) {
    String v = string(name);
    List<String> allowed = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      if (configName.apply(e).equals(v)) {
        return e;
      }
      allowed.add(configName.apply(e));
    }
    throw new InvalidConfigException(
        key(name), "'" + v + "' is not allowed; allowed values: " + String.join(", ", allowed));
  }

  /** {@code host:port}, {@code [v6]:port}, or a bare host with {@code defaultPort}. */
  InetSocketAddress address(String name, int defaultPort) {
    return Addresses.parse(string(name), defaultPort, key(name));
  }

  private String raw(String name) {
    try {
      return String.valueOf(config.getValue(name).unwrapped());
    } catch (ConfigException e) {
      return "?";
    }
  }

  static String show(Duration d) {
    if (d.toNanos() % 1_000_000 != 0 && d.compareTo(Duration.ofSeconds(1)) < 0) {
      return d.toNanos() / 1000 + "us";
    }
    if (d.toMillis() % 1000 != 0 || d.isZero()) {
      return d.toMillis() + "ms";
    }
    return d.toSeconds() + "s";
  }
}

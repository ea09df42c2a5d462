package io.shoal.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Layers the configuration: {@code -D} system properties over the operator's {@code --config}
 * file over the embedded defaults ({@code conf/application.conf} in the jar) over the libraries'
 * reference.conf files.
 */
public final class ConfigLoader {
  private ConfigLoader() {}

  /** Loads and resolves the layered config; file problems become {@link InvalidConfigException}. */
  public static Config load(Optional<Path> file) {
    ConfigFactory.invalidateCaches();
    Config operator = ConfigFactory.empty();
    if (file.isPresent()) {
      Path f = file.get();
      if (!Files.isRegularFile(f)) {
        throw new InvalidConfigException("--config", "no such file: " + f);
      }
      try {
        operator = ConfigFactory.parseFile(f.toFile(), ConfigParseOptions.defaults().setAllowMissing(false));
      } catch (ConfigException e) {
        throw new InvalidConfigException("--config", "cannot parse " + f + ": " + e.getMessage());
      }
    }
    try {
      return ConfigFactory.defaultOverrides()
          .withFallback(operator)
          .withFallback(ConfigFactory.defaultApplication())
          .withFallback(ConfigFactory.defaultReference())
          .resolve();
    } catch (ConfigException e) {
      throw new InvalidConfigException("config", e.getMessage());
    }
  }
}

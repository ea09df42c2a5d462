package io.shoal.config;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where a node's configuration comes from, so a reload can read it again: the operator's {@code
 * --config} file (if any) layered as {@link ConfigLoader} does, or a fixed config (a node started
 * from one in memory, which a reload from the source cannot change).
 */
public interface ConfigSource {
  /** Reads the configuration as it is now; a file that cannot be read throws {@link InvalidConfigException}. */
  Config load();

  /** The file to watch for changes, if there is one. */
  Optional<Path> file();

  /** The {@code --config} file (or only the embedded defaults when empty), read again at each load. */
  static ConfigSource of(Optional<Path> file) {
    return new ConfigSource() {
      @Override
      public Config load() {
        return ConfigLoader.load(file);
      }

      @Override
      public Optional<Path> file() {
        return file;
      }
    };
  }

  /** Always {@code config}: a reload from it finds nothing changed. */
  static ConfigSource fixed(Config config) {
    return new ConfigSource() {
      @Override
      public Config load() {
        return config;
      }

      @Override
      public Optional<Path> file() {
        return Optional.empty();
      }
    };
  }
}

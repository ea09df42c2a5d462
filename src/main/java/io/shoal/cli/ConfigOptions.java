package io.shoal.cli;

import com.typesafe.config.Config;
import io.shoal.config.ConfigSource;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Option;

/** The options every command that reads the configuration takes. */
final class ConfigOptions {
  @Option(names = {"-c", "--config"}, paramLabel = "FILE",
      description = "HOCON file layered over the embedded defaults; only the keys it sets change.")
  Path file;

  @Option(names = "-D", paramLabel = "KEY=VALUE", mapFallbackValue = "",
      description = "Set one key, e.g. -Dshoal.ingress.workers=4 (same as java -D...). Wins over the file.")
  Map<String, String> overrides = Map.of();

  Config load() {
    return source().load();
  }

  /** Where the configuration is read from, again at each reload: the file, under the -D keys. */
  ConfigSource source() {
    overrides.forEach(System::setProperty);
    return ConfigSource.of(Optional.ofNullable(file));
  }
}

package io.shoal.study.scenario;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The scenario catalog on disk: a directory of {@code NAME.conf} files, found by name, listed, and
 * read into a {@link Scenario} whose errors name the file at fault.
 */
final class ScenarioCatalog {

  private ScenarioCatalog() {
  }

  /**
   * Finds a scenario by name in the catalog directory ({@code NAME.conf}), or takes a path to a
   * .conf file as given.
   */
  static Path locate(String nameOrFile, Path catalog) {
    Path asFile = Path.of(nameOrFile);
    if (nameOrFile.endsWith(".conf") && Files.isRegularFile(asFile)) {
      return asFile;
    }
    Path inCatalog = catalog.resolve(nameOrFile + ".conf");
    if (Files.isRegularFile(inCatalog)) {
      return inCatalog;
    }
    throw new ScenarioException("no scenario '" + nameOrFile + "' in " + catalog + "; the catalog has: "
        + String.join(", ", names(catalog)));
  }

  /** The scenario names in a catalog directory, sorted. */
  static List<String> names(Path catalog) {
    if (!Files.isDirectory(catalog)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(catalog)) {
      return files.map(p -> p.getFileName().toString())
          .filter(f -> f.endsWith(".conf"))
          .map(f -> f.substring(0, f.length() - ".conf".length()))
          .sorted().toList();
    } catch (IOException e) {
      throw new ScenarioException("cannot list " + catalog + ": " + e.getMessage());
    }
  }

  /** Reads and checks a scenario file; the error names the file and key at fault. */
  static Scenario load(Path file) {
    String fileName = file.getFileName().toString();
    String name = fileName.endsWith(".conf") ? fileName.substring(0, fileName.length() - 5) : fileName;
    Config c;
    try {
      c = ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setAllowMissing(false)).resolve();
    } catch (ConfigException e) {
      throw new ScenarioException(file + ": " + e.getMessage());
    }
    try {
      return ScenarioReader.read(name, c, file);
    } catch (ConfigException | IllegalArgumentException e) {
      throw new ScenarioException(file + ": " + e.getMessage());
    }
  }
}

package io.shoal.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import io.shoal.reload.ConfigReload;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md and the embedded defaults (conf/application.conf, which the jar carries)
 * say the same: every key of the defaults has a row with the same default, every {@code shoal.}
 * key the page names is one shoal knows, and each section says truly whether a reload applies it.
 */
class ConfigurationDocTest {
  private static final Path DOC = Path.of("docs/configuration.md");
  private static final Path DEFAULTS = Path.of("conf/application.conf");

  /** A key in backticks, e.g. {@code `shoal.listen.udp`}. */
  private static final Pattern KEY = Pattern.compile("`(shoal\\.[A-Za-z0-9_.-]+)`");
  /** A section heading, e.g. {@code ## `shoal.listen`: where queries are answered}. */
  private static final Pattern HEADING = Pattern.compile("^## `shoal\\.([A-Za-z0-9_-]+)`.*");
  /** The default cell of a key the defaults leave out: "not set", maybe with the value that applies then. */
  private static final Pattern NOT_SET = Pattern.compile("not set(?:: `(.*)`)?");
  private static final String LIVE = "**Reload:** applied live";
  private static final String RESTART = "**Reload:** needs a restart";

  /** A table row of the reference: key, default cell, line number. */
  record Row(String key, String defaultCell, int line) {}

  static Config defaults() {
    return ConfigFactory.parseFile(DEFAULTS.toFile()).resolve();
  }

  static Map<String, Row> rows(String doc) {
    Map<String, Row> rows = new LinkedHashMap<>();
    String[] lines = doc.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (!line.startsWith("| `shoal.")) {
        continue;
      }
      // cells are split at '|' not escaped as '\|'
      String[] cells = line.substring(1).split("(?<!\\\\)\\|", -1);
      String key = cells[0].strip().replace("`", "");
      Row previous = rows.put(key, new Row(key, cells.length > 1 ? cells[1].strip() : "", i + 1));
      if (previous != null) {
        rows.put(key + " (again, line " + (i + 1) + ")", new Row(key, "duplicate", i + 1));
      }
    }
    return rows;
  }

  /** Everything wrong between {@code doc} and {@code defaults}, one line each; empty when they agree. */
  static List<String> problems(String doc, Config defaults) {
    List<String> problems = new ArrayList<>();
    Map<String, Row> rows = rows(doc);
    Config shoal = defaults.getConfig("shoal");
    for (Map.Entry<String, ConfigValue> leaf : shoal.entrySet()) {
      String key = "shoal." + leaf.getKey();
      if (!rows.containsKey(key)) {
        problems.add(key + ": in " + DEFAULTS + " (" + leaf.getValue().render() + ") but has no row in " + DOC);
      }
    }
    for (Row row : rows.values()) {
      if (row.defaultCell().equals("duplicate")) {
        problems.add(row.key() + ": a second row at line " + row.line());
      } else if (defaults.hasPath(row.key())) {
        checkDefault(row, defaults.getValue(row.key()), problems);
      } else {
        checkOptional(row, defaults, problems);
      }
    }
    Matcher m = KEY.matcher(doc);
    while (m.find()) {
      String key = m.group(1);
      if (!rows.containsKey(key) && !defaults.hasPath(key)) {
        problems.add(key + ": named in " + DOC + " but neither in " + DEFAULTS + " nor a row of the reference");
      }
    }
    checkReloadNotes(doc, shoal, problems);
    return problems;
  }

  private static void checkDefault(Row row, ConfigValue actual, List<String> problems) {
    String cell = row.defaultCell();
    if (!(cell.startsWith("`") && cell.endsWith("`") && cell.length() > 1)) {
      problems.add(row.key() + " (line " + row.line() + "): default cell '" + cell + "' is not one value in backticks; "
          + DEFAULTS + " has " + actual.render());
      return;
    }
    Object documented;
    try {
      documented = ConfigFactory.parseString("v = " + cell.substring(1, cell.length() - 1)).getValue("v").unwrapped();
    } catch (ConfigException e) {
      problems.add(row.key() + " (line " + row.line() + "): default " + cell + " does not parse: " + e.getMessage());
      return;
    }
    if (!Objects.equals(documented, actual.unwrapped())) {
      problems.add(row.key() + " (line " + row.line() + "): documented default " + cell + ", but " + DEFAULTS
          + " has " + actual.render());
    }
  }

  /**
   * A key the defaults leave out (optional in a group): shoal must know it, and the value the page
   * says applies when it is left out must be the one that applies.
   */
  private static void checkOptional(Row row, Config defaults, List<String> problems) {
    Matcher notSet = NOT_SET.matcher(row.defaultCell());
    if (!notSet.matches()) {
      problems.add(row.key() + " (line " + row.line() + "): not in " + DEFAULTS + ", so its default cell must say "
          + "'not set' (or 'not set: `VALUE`'), not '" + row.defaultCell() + "'");
      return;
    }
    // Servers given, so no check depends on this machine's /etc/resolv.conf.
    Config base = defaults.withValue("shoal.upstreams.default.servers", ConfigValueFactory.fromIterable(List.of("192.0.2.1:53")));
    String value = notSet.group(1) == null ? "\"\"" : notSet.group(1);
    Config with = ConfigFactory.parseString(row.key() + " = " + value).withFallback(base);
    try {
      ShoalConfig.from(with);
    } catch (InvalidConfigException e) {
      if (e.getMessage().contains("unknown key")) {
        problems.add(row.key() + " (line " + row.line() + "): shoal does not know this key: " + e.getMessage());
        return;
      }
      // known, but not valid in the default group's mode (recursion keys) or without tls:// servers
    }
    if (notSet.group(1) != null && row.key().startsWith("shoal.upstreams.default.")) {
      Config recursive = ConfigFactory.parseString("shoal.upstreams.default.mode = recursive").withFallback(base);
      Config given = ConfigFactory.parseString(row.key() + " = " + value).withFallback(recursive);
      try {
        if (!ShoalConfig.from(recursive).upstreams().equals(ShoalConfig.from(given).upstreams())) {
          problems.add(row.key() + " (line " + row.line() + "): setting it to its documented default " + value
              + " changes the settings, so that is not what applies when it is left out");
        }
      } catch (InvalidConfigException e) {
        problems.add(row.key() + " (line " + row.line() + "): its documented default " + value
            + " is refused in a recursive group: " + e.getMessage());
      }
    }
  }

  /** Every section of the defaults has a heading, whose reload note agrees with what a reload applies. */
  private static void checkReloadNotes(String doc, Config shoal, List<String> problems) {
    Map<String, String> notes = new LinkedHashMap<>();
    String section = null;
    for (String line : doc.split("\n", -1)) {
      Matcher h = HEADING.matcher(line);
      if (h.matches()) {
        section = h.group(1);
        notes.put(section, "");
      } else if (section != null && notes.get(section).isEmpty() && line.startsWith("**Reload:**")) {
        notes.put(section, line);
      }
    }
    for (String top : shoal.root().keySet()) {
      String note = notes.get(top);
      boolean live = ConfigReload.LIVE.contains(top);
      if (note == null) {
        problems.add("shoal." + top + ": no section '## `shoal." + top + "`' in " + DOC);
      } else if (!note.startsWith(live ? LIVE : RESTART)) {
        problems.add("shoal." + top + ": a reload " + (live ? "applies it live" : "needs a restart for it")
            + ", but its section says '" + note + "'");
      }
    }
  }

  @Test
  void theDefaultsCheckedAreTheOnesTheJarEmbeds() throws IOException {
    // The defaults a node runs with are the class path's application.conf (ConfigLoader); the build
    // copies conf/application.conf there. Were they to come from elsewhere, this page would be
    // checked against the wrong file.
    try (var in = ConfigurationDocTest.class.getClassLoader().getResourceAsStream("application.conf")) {
      assertTrue(in != null, "no application.conf on the class path");
      assertEquals(Files.readString(DEFAULTS, StandardCharsets.UTF_8), new String(in.readAllBytes(), StandardCharsets.UTF_8),
          "the class path's application.conf is not " + DEFAULTS);
    }
  }

  @Test
  void theReferenceMatchesTheEmbeddedDefaults() throws IOException {
    assertTrue(Files.isRegularFile(DOC), "run from the repository root");
    List<String> problems = problems(Files.readString(DOC, StandardCharsets.UTF_8), defaults());
    assertEquals(List.of(), problems, problems.size() + " difference(s) between " + DOC + " and " + DEFAULTS);
  }

  @Test
  void theCheckFindsAMissingKeyAStrayKeyAWrongDefaultAndAWrongReloadNote() throws IOException {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    String broken = doc
        .replaceFirst("\\| `shoal\\.listen\\.udp_batch` \\|[^\n]*\n", "")
        .replace("| `shoal.ingress.workers` | `8` |", "| `shoal.ingress.workers` | `4` |")
        .replace("**Reload:** needs a restart.\n\n| key | default | values | meaning |\n|---|---|---|---|\n| `shoal.ingress",
            "**Reload:** applied live.\n\n| key | default | values | meaning |\n|---|---|---|---|\n| `shoal.ingress")
        .replace("| `shoal.upstreams.default.deadline` | not set: `8s` |", "| `shoal.upstreams.default.deadline` | not set: `9s` |")
        + "\n| `shoal.ingress.wokers` | `8` | | a typo |\n"
        + "\n| `shoal.upstreams.default.max_qeries` | not set | | a typo of an optional key |\n"
        + "\nSee `shoal.listen.udp_size` too.\n";
    List<String> problems = problems(broken, defaults());
    List<String> keys = problems.stream().map(p -> p.substring(0, p.indexOf(':'))).toList();
    assertTrue(keys.contains("shoal.listen.udp_batch"), "a key with no row: " + problems);
    assertTrue(problems.stream().anyMatch(p -> p.startsWith("shoal.ingress.workers") && p.contains("documented default `4`")),
        "a wrong default: " + problems);
    assertTrue(keys.contains("shoal.ingress"), "a wrong reload note: " + problems);
    assertTrue(problems.stream().anyMatch(p -> p.startsWith("shoal.upstreams.default.deadline") && p.contains("9s")),
        "a wrong default of an optional key: " + problems);
    assertTrue(problems.stream().anyMatch(p -> p.startsWith("shoal.ingress.wokers") && p.contains("not in")),
        "a row for a key shoal does not have: " + problems);
    assertTrue(problems.stream().anyMatch(p -> p.startsWith("shoal.upstreams.default.max_qeries") && p.contains("does not know")),
        "an optional key shoal does not know: " + problems);
    assertTrue(keys.contains("shoal.listen.udp_size"), "a key named in the text that shoal does not have: " + problems);
    assertEquals(7, problems.size(), "nothing else: " + problems);
  }
}

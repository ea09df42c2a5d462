package io.shoal.study.scenario;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A study recipe and the members measured under it, read from one HOCON file of the catalog.
 *
 * @param source the file it was read from, copied into each run directory; null if built in code
 * @param attacks the robustness phases its one shoal member is measured under; null for a plain study
 * @param outage the upstream-outage test every member runs instead of the plain measured run, or null
 * @param cacheMemory the memory-per-answer test every member runs at each cache size instead of the
 *     plain measured run, or null
 * @param page the question and "when this matters" its page opens with, and the study it is a variant of
 * @param recursion the recursion test every member runs over a DNS tree of its own instead of the plain
 *     measured run, or null
 */
public record Scenario(
    String name, String description, String baseline, Recipe recipe, List<Member> members, Path source,
    AttackPlan attacks, OutagePlan outage, CacheMemoryPlan cacheMemory, StudyPage page, RecursionPlan recursion) {

  /** True if any member runs as a group of shoal nodes, so the run also writes cluster.csv. */
  public boolean hasNodeGroups() {
    return members.stream().anyMatch(Member::isNodeGroup);
  }

  /** The pace of each paced member, by name, in the scenario's order; empty when none is paced. */
  public Map<String, Pace> paces() {
    Map<String, Pace> paces = new LinkedHashMap<>();
    members.stream().filter(m -> m.pace() != null).forEach(m -> paces.put(m.name(), m.pace()));
    return paces;
  }

  /** The most nodes any member runs: how many query files (one per node) the run writes. */
  public int maxNodes() {
    return members.stream().mapToInt(Member::nodes).max().orElse(1);
  }

  /** True if any member loads the run's generated domain list, which the run then writes. */
  public boolean usesPolicyList() {
    return members.stream().anyMatch(m -> m.policyList() != null);
  }

  /** This scenario with the generated domain list, written at {@code file}, in its members' configurations. */
  public Scenario withPolicyListAt(Path file) {
    return new Scenario(name, description, baseline, recipe, members.stream().map(m -> m.withPolicyListAt(file)).toList(),
        source, attacks, outage, cacheMemory, page, recursion);
  }

  /** True if any member sends queries of its own and so must run without a route off loopback. */
  public boolean needsIsolation() {
    return members.stream().anyMatch(m -> m.kind().sendsOwnQueries());
  }

  /**
   * This scenario with the trust anchor file the run writes at {@code file} (the DS records of the
   * zone knotd signed) given to every validating member; the scenario itself for an unsigned zone.
   */
  public Scenario withTrustAnchorAt(Path file) {
    if (!recipe.signed() || recursion != null) {
      return this;
    }
    return new Scenario(name, description, baseline, recipe, members.stream().map(m -> m.withTrustAnchorAt(file))
        .toList(), source, attacks, outage, cacheMemory, page, recursion);
  }

  /**
   * This scenario with the recursion tree's root hints and root trust anchor given to every member
   * ({@link Member#withRecursionTree}).
   */
  public Scenario withRecursionTree(Path hints, Path anchor) {
    return new Scenario(name, description, baseline, recipe, members.stream()
        .map(m -> m.withRecursionTree(hints, anchor)).toList(), source, attacks, outage, cacheMemory, page, recursion);
  }

  /**
   * Finds a scenario by name in the catalog directory ({@code NAME.conf}), or takes a path to a
   * .conf file as given.
   */
  public static Path locate(String nameOrFile, Path catalog) {
    return ScenarioCatalog.locate(nameOrFile, catalog);
  }

  /** The scenario names in a catalog directory, sorted. */
  public static List<String> names(Path catalog) {
    return ScenarioCatalog.names(catalog);
  }

  /** Reads and checks a scenario file; the error names the file and key at fault. */
  public static Scenario load(Path file) {
    return ScenarioCatalog.load(file);
  }

  /** The scenario {@code name} read from {@code c}, with no source file to copy into the run. */
  public static Scenario from(String name, Config c) {
    return ScenarioReader.read(name, c, null);
  }
}

package io.shoal.policy;

import io.shoal.files.FileLimits;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code shoal.policy}: RPZ zone files and domain lists, consulted in that order, read within
 * {@code limits} ({@code shoal.files}).
 */
public record PolicySettings(List<Path> rpzFiles, List<DomainList> domainLists, FileLimits limits) {
  /** No policy: every query goes on to the cache. */
  public static final PolicySettings NONE = new PolicySettings(List.of(), List.of());

  /** The files, read within the default limits. */
  public PolicySettings(List<Path> rpzFiles, List<DomainList> domainLists) {
    this(rpzFiles, domainLists, FileLimits.DEFAULTS);
  }

  /** A file of names (one per line, or hosts-format lines) and what to do with a query for one of them or below. */
  public record DomainList(Path file, PolicyAction action) {}

  public boolean configured() {
    return !rpzFiles.isEmpty() || !domainLists.isEmpty();
  }

  /**
   * Parses {@code "FILE ACTION"} lines.
   *
   * @throws IllegalArgumentException naming the line (1-based) and what is wrong
   */
  public static List<DomainList> domainLists(List<String> lines) {
    List<DomainList> out = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).trim();
      int space = Math.max(line.lastIndexOf(' '), line.lastIndexOf('\t'));
      PolicyAction action = space > 0 ? PolicyAction.forList(line.substring(space + 1)) : null;
      if (action == null) {
        throw new IllegalArgumentException("line " + (i + 1) + " (\"" + lines.get(i)
            + "\"): expected \"FILE ACTION\" with ACTION one of nxdomain, nodata, refuse, drop");
      }
      out.add(new DomainList(Path.of(line.substring(0, space).trim()), action));
    }
    return List.copyOf(out);
  }
}

package io.shoal.study.host;

import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import io.shoal.study.scenario.Scenario;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The programs a scenario needs (dnsperf, knotd and knotc, each peer, and unshare and ip when the
 * run is isolated), found on the PATH or in the sbin directories that a non-root PATH often lacks.
 * As root, missing ones are installed with apt-get; otherwise the error says what to install.
 */
public final class Prerequisites {

  /** The programs found, by name, as absolute paths. */
  public record Tools(Map<String, Path> paths) {
    public String path(String binary) {
      Path p = paths.get(binary);
      if (p == null) {
        throw new IllegalStateException(binary + " was not checked for this scenario");
      }
      return p.toString();
    }
  }

  private static final Map<String, String> PACKAGE_OF = new LinkedHashMap<>();

  static {
    PACKAGE_OF.put("dnsperf", "dnsperf");
    PACKAGE_OF.put("knotd", "knot");
    PACKAGE_OF.put("knotc", "knot");
    PACKAGE_OF.put("keymgr", "knot");
    PACKAGE_OF.put("kdig", "knot-dnsutils");
    PACKAGE_OF.put("unshare", "util-linux");
    PACKAGE_OF.put("ip", "iproute2");
    PACKAGE_OF.put("openssl", "openssl");
    PACKAGE_OF.put("tar", "tar");
    PACKAGE_OF.put("xz", "xz-utils");
    for (MemberKind k : MemberKind.values()) {
      for (String b : k.binaries()) {
        PACKAGE_OF.put(b, k.debianPackages().get(0));
      }
    }
  }

  private static final List<String> EXTRA_DIRS = List.of("/usr/sbin", "/sbin", "/usr/local/sbin");
  private static final Duration APT_LIMIT = Duration.ofMinutes(15);

  private Prerequisites() {}

  /** The programs a run of these members calls over an unsigned zone. */
  public static List<String> binariesFor(List<Member> members, boolean isolate) {
    return binariesFor(members, isolate, false);
  }

  /**
   * The programs a run of these members calls; over a {@code signed} zone also keymgr (the zone's
   * trust anchor) and kdig (the check of each member's sample answer); tar and xz always.
   */
  public static List<String> binariesFor(List<Member> members, boolean isolate, boolean signed) {
    Set<String> names = new LinkedHashSet<>(List.of("dnsperf", "knotd", "knotc"));
    if (signed) {
      names.addAll(List.of("keymgr", "kdig"));
    }
    for (Member m : members) {
      names.addAll(m.kind().binaries());
      if (m.transport().encrypted()) {
        // the member's test certificate
        names.add("openssl");
      }
    }
    if (isolate) {
      names.addAll(List.of("unshare", "ip"));
    }
    // the end of every run packs its raw logs into raw.tar.xz (tar -J runs xz)
    names.addAll(List.of("tar", "xz"));
    return List.copyOf(names);
  }

  /**
   * The programs a run of {@code members} of {@code scenario} calls: those of
   * {@link #binariesFor(List, boolean, boolean)}, and openssl for a robustness scenario whose
   * members listen for DoT and DoH (the DoT and DoH holders phases make their certificate).
   */
  public static List<String> binariesFor(Scenario scenario, List<Member> members, boolean isolate) {
    List<String> names = new ArrayList<>(binariesFor(members, isolate, scenario.recipe().signed()));
    if (scenario.attacks() != null && scenario.attacks().encryptedHolders() > 0 && !names.contains("openssl")) {
      // before tar and xz, which stay last
      names.add(names.size() - 2, "openssl");
    }
    return List.copyOf(names);
  }

  /** The Debian package that provides {@code binary}. */
  public static String packageOf(String binary) {
    return PACKAGE_OF.getOrDefault(binary, binary);
  }

  /**
   * Finds every program; as root installs what is missing first. Throws with the exact
   * apt-get command when something is still missing.
   */
  public static Tools ensure(List<String> binaries, boolean root, PrintStream out, StartedProcesses processes,
      Path scratch) throws MissingTools {
    List<String> missing = missing(binaries);
    if (!missing.isEmpty() && root) {
      Set<String> packages = packages(missing);
      out.println("study: installing " + String.join(" ", packages) + " (missing: " + String.join(", ", missing) + ")");
      if (!aptInstall(packages, processes, scratch)) {
        out.println("study: apt-get install failed; updating the package lists and trying once more");
        aptRun(List.of("apt-get", "update", "-q"), processes, scratch);
        aptInstall(packages, processes, scratch);
      }
      missing = missing(binaries);
    }
    if (!missing.isEmpty()) {
      throw new MissingTools(missing, packages(missing));
    }
    Map<String, Path> found = new LinkedHashMap<>();
    for (String b : binaries) {
      found.put(b, find(b).orElseThrow());
    }
    return new Tools(found);
  }

  /** Looks a program up on the PATH, then in the sbin directories. */
  public static Optional<Path> find(String binary) {
    List<String> dirs = new ArrayList<>();
    String path = System.getenv("PATH");
    if (path != null) {
      dirs.addAll(List.of(path.split(File.pathSeparator)));
    }
    dirs.addAll(EXTRA_DIRS);
    for (String dir : dirs) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, binary);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate.toAbsolutePath());
      }
    }
    return Optional.empty();
  }

  private static List<String> missing(List<String> binaries) {
    return binaries.stream().filter(b -> find(b).isEmpty()).toList();
  }

  private static Set<String> packages(List<String> binaries) {
    Set<String> p = new LinkedHashSet<>();
    binaries.forEach(b -> p.add(packageOf(b)));
    return p;
  }

  private static boolean aptInstall(Set<String> packages, StartedProcesses processes, Path scratch) {
    List<String> cmd = new ArrayList<>(List.of("apt-get", "install", "-y", "-q"));
    cmd.addAll(packages);
    return aptRun(cmd, processes, scratch);
  }

  private static boolean aptRun(List<String> cmd, StartedProcesses processes, Path scratch) {
    if (find("apt-get").isEmpty()) {
      return false;
    }
    try {
      Files.createDirectories(scratch);
      // apt-get reads DEBIAN_FRONTEND from the environment; env(1) sets it for this command only.
      List<String> withEnv = new ArrayList<>(List.of("env", "DEBIAN_FRONTEND=noninteractive"));
      withEnv.addAll(cmd);
      return processes.run(withEnv, scratch.resolve("apt-get.log"), APT_LIMIT).exitCode() == 0;
    } catch (StudyException | IOException e) {
      return false;
    }
  }

  /** Programs that are still missing, and the command that would install them. */
  public static final class MissingTools extends Exception {
    private final List<String> binaries;
    private final Set<String> packages;

    MissingTools(List<String> binaries, Set<String> packages) {
      super("missing: " + String.join(", ", binaries));
      this.binaries = binaries;
      this.packages = packages;
    }

    /** What to tell the user: the programs and the exact install command. */
    public String advice() {
      return "study: these programs are needed and were not found: " + String.join(", ", binaries) + "\n"
          + "study: install them (Debian/Ubuntu) with:\n"
          + "  sudo apt-get install -y " + String.join(" ", packages) + "\n"
          + "study: then run the same command again.";
    }
  }
}

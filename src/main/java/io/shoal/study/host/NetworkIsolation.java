package io.shoal.study.host;

import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Keeps a study's traffic on loopback when a member sends queries of its own (root priming,
 * trust-anchor refreshes): the study re-runs itself inside a new network namespace that has only
 * the loopback interface, so nothing can leave 127.0.0.0/8 whatever a peer tries.
 */
public final class NetworkIsolation {
  /** Set in the environment of the re-run, so it can refuse to loop if isolation did not happen. */
  public static final String MARKER = "SHOAL_STUDY_ISOLATED";

  private NetworkIsolation() {}

  /** True if every network interface this process sees is a loopback one. */
  public static boolean isolated() {
    try {
      List<NetworkInterface> all = Collections.list(NetworkInterface.getNetworkInterfaces());
      for (NetworkInterface i : all) {
        if (!i.isLoopback()) {
          return false;
        }
      }
      return true;
    } catch (SocketException e) {
      return false;
    }
  }

  /** True for the superuser, who may create network namespaces and install packages. */
  public static boolean root() {
    try {
      return new com.sun.security.auth.module.UnixSystem().getUid() == 0;
    } catch (RuntimeException | LinkageError e) {
      return "root".equals(System.getProperty("user.name"));
    }
  }

  /**
   * The command that runs this same study again in a fresh network namespace: unshare --net,
   * bring loopback up, then the same JVM and arguments.
   */
  public static List<String> rerunCommand(Prerequisites.Tools tools, List<String> studyArgs) {
    List<String> cmd = new ArrayList<>(List.of(
        tools.path("unshare"), "--net", "--", "/bin/sh", "-c",
        "\"$0\" link set lo up && exec \"$@\"", tools.path("ip"),
        JavaLauncher.path(), "-cp", absoluteClassPath(), "io.shoal.Main", "study"));
    cmd.addAll(studyArgs);
    return cmd;
  }

  private static String absoluteClassPath() {
    List<String> entries = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      entries.add(e.isEmpty() ? e : java.nio.file.Path.of(e).toAbsolutePath().toString());
    }
    return String.join(java.io.File.pathSeparator, entries);
  }
}

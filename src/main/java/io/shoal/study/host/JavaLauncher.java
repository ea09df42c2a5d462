package io.shoal.study.host;

import java.nio.file.Path;

/** The java launcher that runs this study, so every JVM it starts runs on the same Java version. */
public final class JavaLauncher {
  private JavaLauncher() {}

  /** The launcher's path: {@code bin/java} under this JVM's {@code java.home}. */
  public static String path() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /**
   * The jcmd of the same JDK, which asks the JVMs this study started for a GC or their heap: a jcmd
   * of another version may fail to attach.
   */
  public static String jcmd() {
    return Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
  }
}

package io.shoal.study.host;

import java.nio.file.Path;

/** The java launcher that runs this study, so every JVM it starts runs on the same Java version. */
public final class JavaLauncher {
  private JavaLauncher() {}

  /** The launcher's path: {@code bin/java} under this JVM's {@code java.home}. */
  public static String path() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}

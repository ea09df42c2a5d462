package io.shoal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/shoal's command lines: what JVM it starts serve with, the heap's ceiling asked of
 * {@code shoal config --java-heap} with the same configuration. A stand-in {@code java} first on
 * PATH records each command line and answers {@code config --java-heap} as the jar would.
 */
class BinShoalTest {
  /** What the stand-in prints for {@code config --java-heap}: a figure no default gives. */
  private static final String HEAP = "-Xmx777m";

  @Test
  void serveGetsTheHeapTheConfigurationNeedsAndTheIdleFootprintOptions(@TempDir Path dir) throws Exception {
    List<String> calls = run(dir, null, "serve", "--config", "my.conf", "-Dshoal.caches.answers.max_entries=500000");
    // the ceiling is asked with the very arguments serve gets
    assertTrue(calls.contains("-jar " + jar(dir) + " config --java-heap --config my.conf "
        + "-Dshoal.caches.answers.max_entries=500000"), calls.toString());
    String serve = calls.get(calls.size() - 1);
    assertTrue(serve.startsWith("-XX:+UseG1GC -XX:+ExitOnOutOfMemoryError " + HEAP + " -Xms8m -XX:MaxNewSize=64m "
        + "-XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30 -XX:G1PeriodicGCInterval=30000"), serve);
    // the stand-in accepts -version with the trim option, as JDK 17.0.9 and later do
    assertTrue(serve.contains("-XX:TrimNativeHeapInterval=30000"), serve);
    assertTrue(serve.endsWith("-jar " + jar(dir) + " serve --config my.conf -Dshoal.caches.answers.max_entries=500000"),
        serve);
  }

  @Test
  void shoalJavaOptsReplacesTheDefaultsAndOtherCommandsGetNoDerivedHeap(@TempDir Path dir) throws Exception {
    List<String> calls = run(dir, "-Xmx2g", "serve");
    assertEquals(List.of("-Xmx2g -jar " + jar(dir) + " serve"), calls);
    List<String> other = run(dir, null, "cache", "flush");
    assertEquals(List.of("-XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -jar " + jar(dir) + " cache flush"), other);
  }

  @Test
  void extraOptionsComeAfterTheDefaultsAndKeepThem(@TempDir Path dir) throws Exception {
    String serve = last(runWithExtra(dir, null, "-XX:-TieredCompilation -Xss512k", "serve", "--config", "my.conf"));
    // every default stays, the derived heap included, and the extra options follow them, before -jar
    assertTrue(serve.startsWith("-XX:+UseG1GC -XX:+ExitOnOutOfMemoryError " + HEAP + " -Xms8m"), serve);
    assertTrue(serve.contains("-XX:TrimNativeHeapInterval=30000 -XX:-TieredCompilation -Xss512k -jar "), serve);
    // with SHOAL_JAVA_OPTS they are added to those instead, and other commands get them too
    assertEquals(List.of("-Xmx2g -Xss512k -jar " + jar(dir) + " serve"), runWithExtra(dir, "-Xmx2g", "-Xss512k", "serve"));
    assertEquals("-XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Xss512k -jar " + jar(dir) + " cache flush",
        last(runWithExtra(dir, null, "-Xss512k", "cache", "flush")));
  }

  private static String last(List<String> calls) {
    return calls.get(calls.size() - 1);
  }

  private static Path jar(Path dir) {
    return dir.resolve("root").resolve("target").resolve("shoal.jar");
  }

  /** Runs a copy of bin/shoal in a tree whose jar is newer than its sources; returns the java command lines. */
  private static List<String> run(Path dir, String javaOpts, String... args) throws IOException, InterruptedException {
    return runWithExtra(dir, javaOpts, null, args);
  }

  /** As above, with SHOAL_JAVA_EXTRA_OPTS set to {@code extraOpts} unless it is null. */
  private static List<String> runWithExtra(Path dir, String javaOpts, String extraOpts, String... args)
      throws IOException, InterruptedException {
    Path root = dir.resolve("root");
    Files.createDirectories(root.resolve("bin"));
    Files.createDirectories(root.resolve("src").resolve("main"));
    Files.createDirectories(root.resolve("conf"));
    Files.writeString(root.resolve("pom.xml"), "<project/>");
    Files.copy(Path.of("bin", "shoal"), root.resolve("bin").resolve("shoal"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    Files.createDirectories(root.resolve("target"));
    Files.writeString(jar(dir), "not a jar");
    Files.setLastModifiedTime(jar(dir), java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 60_000));
    Path fake = dir.resolve("fakebin");
    Files.createDirectories(fake);
    Path log = dir.resolve("calls.txt");
    Files.deleteIfExists(log);
    Path java = fake.resolve("java");
    Files.writeString(java, "#!/bin/sh\n"
        + "echo \"$*\" >> '" + log + "'\n"
        + "case \"$*\" in *'config --java-heap'*) echo '" + HEAP + "' ;; esac\n"
        + "exit 0\n");
    Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    ProcessBuilder pb = new ProcessBuilder();
    pb.command().add(root.resolve("bin").resolve("shoal").toString());
    pb.command().addAll(List.of(args));
    pb.environment().put("PATH", fake + ":" + System.getenv("PATH"));
    pb.environment().remove("SHOAL_JAVA_OPTS");
    pb.environment().remove("SHOAL_JAVA_EXTRA_OPTS");
    if (extraOpts != null) {
      pb.environment().put("SHOAL_JAVA_EXTRA_OPTS", extraOpts);
    }
    if (javaOpts != null) {
      pb.environment().put("SHOAL_JAVA_OPTS", javaOpts);
    }
    pb.redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile());
    Process p = pb.start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "bin/shoal did not finish");
    assertEquals(0, p.exitValue(), Files.readString(dir.resolve("out.txt")));
    // the probe of the trim option (-version) is not a command line of shoal's
    return Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> !l.endsWith("-version")).toList();
  }
}

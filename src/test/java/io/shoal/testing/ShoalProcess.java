package io.shoal.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** shoal as an operator runs it: a separate JVM with its output in a log file, stopped by PID. */
public final class ShoalProcess implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public final Process process;
  public final Path log;

  private ShoalProcess(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /** Runs {@code io.shoal.Main} with {@code args} on this test's classpath. */
  public static ShoalProcess launch(String... args) throws IOException {
    return launchIn(null, args);
  }

  /** As {@link #launch}, in the working directory {@code dir} (null: this JVM's). */
  public static ShoalProcess launchIn(Path dir, String... args) throws IOException {
    return launchWith(dir, List.of(), args);
  }

  /** As {@link #launchIn}, with {@code jvmOptions} after the defaults (a later -Xmx wins). */
  public static ShoalProcess launchWith(Path dir, List<String> jvmOptions, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"));
    cmd.addAll(isolated());
    cmd.addAll(jvmOptions);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.shoal.Main"));
    cmd.addAll(List.of(args));
    return start(cmd, dir);
  }

  /** Runs the runnable jar {@code jar} with {@code args}, as an operator does with java -jar. */
  public static ShoalProcess launchJar(Path jar, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(isolated());
    cmd.addAll(List.of("-jar", jar.toString()));
    cmd.addAll(List.of(args));
    return start(cmd, null);
  }

  /**
   * JVM options that keep a node from sharing anything with other tests: an admin port the OS
   * picks, and a token file of its own instead of data/admin.token in the working directory
   * (arguments after the command override both); and DNSSEC validation off, since the test
   * upstreams serve unsigned fake zones.
   */
  private static List<String> isolated() throws IOException {
    Path token = Files.createTempDirectory("shoal-admin").resolve("admin.token");
    return List.of("-Xmx256m", "-Dshoal.admin.port=0", "-Dshoal.admin.token_file=" + token,
        "-Dshoal.dnssec.validation=off");
  }

  private static ShoalProcess start(List<String> cmd, Path dir) throws IOException {
    Path log = Files.createTempFile("shoal", ".log");
    // Signals at their defaults, as a service manager starts a node: a suite run under nohup or
    // from a background job would otherwise pass on an ignored SIGHUP or SIGINT, which the JVM
    // keeps (env execs java, so the PID is the node's).
    List<String> withDefaults = new ArrayList<>(List.of("env", "--default-signal"));
    withDefaults.addAll(cmd);
    ProcessBuilder builder = new ProcessBuilder(withDefaults).redirectErrorStream(true).redirectOutput(log.toFile());
    if (dir != null) {
      builder.directory(dir.toFile());
    }
    return new ShoalProcess(builder.start(), log);
  }

  /**
   * Waits (at most {@code seconds}) for the start-up line and returns it: the addresses the node
   * really bound, so a test can ask for port 0 and learn the port here. Fails if it never came.
   */
  public Started awaitStarted(int seconds) throws IOException, InterruptedException {
    if (!awaitOutput("answering on", seconds)) {
      throw new AssertionError("shoal did not start within " + seconds + " s:\n" + output());
    }
    Matcher m = STARTED.matcher(output());
    if (!m.find()) {
      throw new AssertionError("no addresses in the start-up line:\n" + output());
    }
    return new Started(new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2))),
        new InetSocketAddress(m.group(3), Integer.parseInt(m.group(4))), m.group(5));
  }

  private static final Pattern STARTED = Pattern.compile(
      "answering on udp \\S*/([0-9.]+):(\\d+) .* and tcp \\S*/([0-9.]+):(\\d+); (?:metrics at http://([^/\\s]+)/metrics)?");

  /** Where a started node answers: its DNS sockets and its /metrics "host:port" (null when off). */
  public record Started(InetSocketAddress udp, InetSocketAddress tcp, String metrics) {}

  public String output() throws IOException {
    return Files.readString(log, StandardCharsets.UTF_8);
  }

  /** Waits (at most {@code seconds}) until the output contains {@code text}; false if it never did. */
  public boolean awaitOutput(String text, int seconds) throws IOException, InterruptedException {
    Await.until(Duration.ofSeconds(seconds), () -> !process.isAlive() || contains(text));
    return output().contains(text);
  }

  private boolean contains(String text) {
    try {
      return output().contains(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The exit status, waiting at most {@code seconds}; kills the process and fails after that. */
  public int exit(int seconds) throws InterruptedException {
    return exit(process, seconds);
  }

  /** The exit status of {@code process}, as {@link #exit(int)}. */
  public static int exit(Process process, int seconds) throws InterruptedException {
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("shoal did not exit within " + seconds + " s");
    }
    return process.exitValue();
  }

  /** The HTTP status of GET {@code url}, or -1 when nothing answers. */
  public static int httpStatus(String url) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** Sends SIGKILL: the node dies without leaving its cluster. */
  public void kill() {
    process.destroyForcibly();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }
}

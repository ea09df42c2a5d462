package io.shoal.testing;

import java.io.IOException;
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
    Path log = Files.createTempFile("shoal", ".log");
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
        "-Xmx256m", "-Dshoal.admin.port=0", "-cp", System.getProperty("java.class.path"), "io.shoal.Main"));
    cmd.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    if (dir != null) {
      builder.directory(dir.toFile());
    }
    return new ShoalProcess(builder.start(), log);
  }

  public String output() throws IOException {
    return Files.readString(log, StandardCharsets.UTF_8);
  }

  /** Waits (at most {@code seconds}) until the output contains {@code text}; false if it never did. */
  public boolean awaitOutput(String text, int seconds) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!output().contains(text) && System.nanoTime() < deadline && process.isAlive()) {
      Thread.sleep(100);
    }
    return output().contains(text);
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

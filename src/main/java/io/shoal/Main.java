package io.shoal;

import io.shoal.cli.ShoalCommand;
import picocli.CommandLine;

/** Entry point of {@code java -jar shoal.jar}. */
public final class Main {
  private Main() {}

  /** The JDK property that sizes the common ForkJoinPool. */
  static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  public static void main(String[] args) {
    // Akka's Java API completes CompletionStages through Scala's converters, which run every
    // callback asynchronously on the common pool. On a machine with 2 cores that pool has
    // parallelism 1, and the JDK then starts a new thread for every callback: tens of thousands
    // per second on the miss path. Size the pool before anything touches it.
    if (System.getProperty(COMMON_POOL_PARALLELISM) == null) {
      System.setProperty(COMMON_POOL_PARALLELISM, String.valueOf(Math.max(4, Runtime.getRuntime().availableProcessors())));
    }
    System.exit(ShoalCommand.commandLine().execute(args));
  }
}

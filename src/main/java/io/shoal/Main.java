package io.shoal;

import io.shoal.cli.ShoalCommand;
import picocli.CommandLine;

/** Entry point of {@code java -jar shoal.jar}. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.exit(ShoalCommand.commandLine().execute(args));
  }
}

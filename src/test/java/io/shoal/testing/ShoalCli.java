package io.shoal.testing;

import io.shoal.cli.ShoalCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** The shoal command line run in the test's JVM, its output captured. */
public final class ShoalCli {
  private ShoalCli() {}

  /** Exit status, output and error output of one run. */
  public record Run(int status, String out, String err) {}

  public static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = ShoalCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int status = cl.execute(args);
    return new Run(status, out.toString(), err.toString());
  }
}

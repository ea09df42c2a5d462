package io.shoal.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code shoal} command and its subcommands. */
@Command(
    name = "shoal",
    mixinStandardHelpOptions = true,
    versionProvider = ShoalCommand.Version.class,
    description = "A reactive DNS caching resolver on Akka.",
    subcommands = {ServeCommand.class, ReloadCommand.class, ConfigCommand.class, CacheCommand.class, StudyCommand.class,
        CommandLine.HelpCommand.class},
    footer = {"", "Exit status: 0 success, 1 runtime failure (e.g. a port in use), 2 bad usage or configuration."})
public final class ShoalCommand implements Runnable {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  /** The configured picocli command line, shared by {@code main} and the tests. */
  public static CommandLine commandLine() {
    return new CommandLine(new ShoalCommand())
        .setCaseInsensitiveEnumValuesAllowed(true);
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required (serve, reload, config, cache, study)");
  }

  /** The version recorded in the jar's manifest, or "development" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = ShoalCommand.class.getPackage().getImplementationVersion();
      return new String[] {"shoal " + (v == null ? "development" : v)};
    }
  }
}

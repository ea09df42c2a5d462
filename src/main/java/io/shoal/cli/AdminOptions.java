package io.shoal.cli;

import io.shoal.admin.AdminToken;
import io.shoal.config.AdminSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** The options that reach a running node's admin endpoint, shared by the commands that use it. */
final class AdminOptions {
  static final String DEFAULT_ADMIN = "127.0.0.1:8559";

  @Option(names = "--admin", paramLabel = "HOST:PORT",
      description = "The running node's admin endpoint (default: " + DEFAULT_ADMIN + ")")
  String admin;

  @Option(names = "--token-file", paramLabel = "FILE",
      description = "The token the running node wrote at start (shoal.admin.token_file; default: "
          + AdminSettings.DEFAULT_TOKEN_FILE + ", {port} being the admin port)")
  Path tokenFile;

  /** HOST:PORT of the endpoint asked for, or the default one. */
  String endpoint() {
    return admin == null ? DEFAULT_ADMIN : admin;
  }

  /**
   * A client for the endpoint, with the token read from its file; null, having said why on the
   * command's error stream, when the token cannot be read.
   */
  AdminClient client(CommandSpec spec) {
    String endpoint = endpoint();
    Path tokenPath = tokenFile == null
        ? AdminSettings.tokenFile(AdminSettings.DEFAULT_TOKEN_FILE, port(spec, endpoint)) : tokenFile;
    try {
      return new AdminClient(endpoint, AdminToken.read(tokenPath));
    } catch (IOException e) {
      spec.commandLine().getErr().println("shoal: cannot read the admin token from " + tokenPath + " (" + e
          + "); the running node writes it at start to shoal.admin.token_file: pass that file with --token-file FILE");
      return null;
    }
  }

  /** Says on the command's error stream that the endpoint cannot be reached; exit status 1. */
  int unreachable(CommandSpec spec, IOException e) {
    spec.commandLine().getErr().println("shoal: cannot reach the admin endpoint at " + endpoint() + ": " + e.getMessage()
        + " (is shoal running with shoal.admin.enabled = on? For a stopped node's LMDB cache use --path DIR)");
    return 1;
  }

  /** Reports a response other than 200: exit status 2 for a request the node found bad, else 1. */
  static int failed(CommandSpec spec, int status, String body) {
    PrintWriter err = spec.commandLine().getErr();
    err.print(status == 400 ? "shoal: " + body : "shoal: admin endpoint answered " + status + ": " + body);
    err.flush();
    return status == 400 ? 2 : 1;
  }

  /** The port of a HOST:PORT (or [V6]:PORT) endpoint. */
  private static int port(CommandSpec spec, String endpoint) {
    try {
      return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    } catch (NumberFormatException e) {
      throw new ParameterException(spec.commandLine(), "--admin: expected HOST:PORT, not " + endpoint);
    }
  }
}

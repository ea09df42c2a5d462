package io.shoal.cli;

import io.shoal.admin.AdminToken;
import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.cache.lmdb.CacheDirectoryException;
import io.shoal.config.AdminSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code shoal cache flush}: remove a name from a running node's caches (every node's in a
 * cluster), or offline from an LMDB cache directory.
 */
@Command(
    name = "flush",
    header = "Remove a name from a running node or an LMDB directory.",
    mixinStandardHelpOptions = true,
    description = {
      "Remove NAME from caches: a running node's, or offline an LMDB directory's.",
      "",
      "Without --path: through the running node's admin endpoint (shoal.admin,",
      "127.0.0.1:8559 by default). In cluster mode every node drops it, local",
      "copies included.",
      "",
      "With --path DIR: offline, in a stopped node's LMDB cache directory. Remove",
      "NAME, or every answer with --all; one of the two is required, so a forgotten",
      "NAME never empties a cache. A directory a running shoal holds is refused."
    })
final class CacheFlushCommand implements Callable<Integer> {
  private static final String DEFAULT_ADMIN = "127.0.0.1:8559";

  @Spec
  CommandSpec spec;

  @Parameters(paramLabel = "NAME", arity = "0..1", description = "Domain name to remove, e.g. www.example.com")
  String name;

  @Option(names = {"-t", "--type"}, paramLabel = "TYPE", description = "Only this record type (A, AAAA, MX...); default: all types")
  String type;

  @Option(names = "--admin", paramLabel = "HOST:PORT",
      description = "The running node's admin endpoint (default: " + DEFAULT_ADMIN + ")")
  String admin;

  @Option(names = "--path", paramLabel = "DIR",
      description = "Offline: the LMDB cache directory (shoal.caches.<name>.lmdb.path) of a stopped node")
  Path path;

  @Option(names = "--token-file", paramLabel = "FILE",
      description = "The token the running node wrote at start (shoal.admin.token_file; default: "
          + AdminSettings.DEFAULT_TOKEN_FILE + ", {port} being the admin port)")
  Path tokenFile;

  @Option(names = "--all", description = "Offline, with --path and no NAME: remove every answer")
  boolean all;

  /** The port of a HOST:PORT (or [V6]:PORT) endpoint. */
  private int adminPort(String endpoint) {
    try {
      return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    } catch (NumberFormatException e) {
      throw new ParameterException(spec.commandLine(), "--admin: expected HOST:PORT, not " + endpoint);
    }
  }

  @Override
  public Integer call() throws Exception {
    if (path != null && admin != null) {
      throw new ParameterException(spec.commandLine(), "--path (offline) and --admin (running node) exclude each other");
    }
    int qtype = CacheCommand.qtype(spec, type);
    return path != null ? offline(qtype) : online();
  }

  private int offline(int qtype) {
    if (name == null && !all) {
      throw new ParameterException(spec.commandLine(),
          "name the NAME to remove, or pass --all to remove every answer in " + path);
    }
    if (name != null && all) {
      throw new ParameterException(spec.commandLine(), "give either NAME or --all, not both");
    }
    if (all && type != null) {
      throw new ParameterException(spec.commandLine(), "--type applies to NAME, not to --all");
    }
    if (name != null) {
      CacheCommand.requireName(spec, name);
    }
    CacheDirectory dir;
    try {
      dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_WRITE);
    } catch (CacheDirectoryException e) {
      return CacheCommand.unusable(spec, e, "; stop that node first, or flush through it: shoal cache flush NAME --admin HOST:PORT");
    }
    PrintWriter out = spec.commandLine().getOut();
    try (dir) {
      if (all) {
        out.println("removed all " + dir.flushAll() + " answers from " + path);
      } else {
        out.println("removed " + dir.flushName(name, qtype) + " answers for " + name
            + (type == null ? "" : " type " + type.toUpperCase(Locale.ROOT)) + " from " + path);
      }
      return 0;
    } catch (CacheDirectoryException e) {
      spec.commandLine().getErr().println("shoal: " + e.getMessage());
      return 1;
    }
  }

  private int online() throws InterruptedException {
    if (name == null) {
      throw new ParameterException(spec.commandLine(), "Missing required parameter: 'NAME'");
    }
    if (all) {
      throw new ParameterException(spec.commandLine(), "--all works offline only, with --path");
    }
    String endpoint = admin == null ? DEFAULT_ADMIN : admin;
    PrintWriter err = spec.commandLine().getErr();
    Path tokenPath = tokenFile == null
        ? AdminSettings.tokenFile(AdminSettings.DEFAULT_TOKEN_FILE, adminPort(endpoint)) : tokenFile;
    String token;
    try {
      token = AdminToken.read(tokenPath);
    } catch (IOException e) {
      err.println("shoal: cannot read the admin token from " + tokenPath + " (" + e + "); the running node writes it"
          + " at start to shoal.admin.token_file: pass that file with --token-file FILE");
      return 1;
    }
    HttpResponse<String> response;
    try {
      response = new AdminClient(endpoint, token).flush(name, type);
    } catch (IOException e) {
      err.println("shoal: cannot reach the admin endpoint at " + endpoint + ": " + e.getMessage()
          + " (is shoal running with shoal.admin.enabled = on? For a stopped node's LMDB cache use --path DIR)");
      return 1;
    }
    if (response.statusCode() == 400) {
      err.print("shoal: " + response.body());
      err.flush();
      return 2;
    }
    if (response.statusCode() != 200) {
      err.print("shoal: admin endpoint answered " + response.statusCode() + ": " + response.body());
      err.flush();
      return 1;
    }
    PrintWriter out = spec.commandLine().getOut();
    out.print(response.body());
    // print() never flushes, and Main exits through System.exit: without this the summary is lost.
    out.flush();
    return 0;
  }
}

package io.shoal.cli;

import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.cache.lmdb.CacheDirectoryException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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
  @Spec
  CommandSpec spec;

  @Parameters(paramLabel = "NAME", arity = "0..1", description = "Domain name to remove, e.g. www.example.com")
  String name;

  @Option(names = {"-t", "--type"}, paramLabel = "TYPE", description = "Only this record type (A, AAAA, MX...); default: all types")
  String type;

  @Option(names = "--path", paramLabel = "DIR",
      description = "Offline: the LMDB cache directory (shoal.caches.<name>.lmdb.path) of a stopped node")
  Path path;

  @Mixin
  AdminOptions adminOptions;

  @Option(names = "--all", description = "Offline, with --path and no NAME: remove every answer")
  boolean all;

  @Override
  public Integer call() throws Exception {
    if (path != null && adminOptions.admin != null) {
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
    AdminClient client = adminOptions.client(spec);
    if (client == null) {
      return 1;
    }
    HttpResponse<String> response;
    try {
      response = client.flush(name, type);
    } catch (IOException e) {
      return adminOptions.unreachable(spec, e);
    }
    if (response.statusCode() != 200) {
      return AdminOptions.failed(spec, response.statusCode(), response.body());
    }
    PrintWriter out = spec.commandLine().getOut();
    out.print(response.body());
    // print() never flushes, and Main exits through System.exit: without this the summary is lost.
    out.flush();
    return 0;
  }
}

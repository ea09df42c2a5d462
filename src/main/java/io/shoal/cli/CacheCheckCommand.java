package io.shoal.cli;

import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.cache.lmdb.CacheDirectoryException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code shoal cache check --path DIR}: the integrity of an LMDB cache directory. */
@Command(
    name = "check",
    header = "Check the integrity of a stopped node's LMDB cache.",
    mixinStandardHelpOptions = true,
    description = {
      "Check the integrity of a stopped node's LMDB cache directory.",
      "",
      "Every shard opens; every key is well formed and sits in the shard its hash",
      "names; every answer decodes and its DNS message parses; the expiry index",
      "and the answers agree one to one. Exits 0 when clean, 1 with the problems",
      "listed. Run it after a crash, before starting a node on the directory; if",
      "it fails, start shoal on an empty path. A directory a running shoal holds",
      "is refused."
    })
final class CacheCheckCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--path", paramLabel = "DIR", required = true,
      description = "The LMDB cache directory (shoal.caches.<name>.lmdb.path)")
  Path path;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_READ)) {
      CacheDirectory.CheckReport report = dir.check(System.currentTimeMillis());
      out.println("checked " + path + ": " + report.shards() + " shards, " + report.entries() + " answers ("
          + report.expired() + " expired)");
      report.notes().forEach(n -> out.println("note: " + n));
      if (report.clean()) {
        out.println("clean");
        return 0;
      }
      long total = report.problems().size() + report.unlisted();
      out.println(total + (total == 1 ? " problem:" : " problems:"));
      report.problems().forEach(p -> out.println("  " + p));
      if (report.unlisted() > 0) {
        out.println("  ... and " + report.unlisted() + " more");
      }
      return 1;
    } catch (CacheDirectoryException e) {
      return CacheCommand.unusable(spec, e,
          "; check needs the directory to itself: stop that node first (stat and dump can read a running node's cache)");
    }
  }
}

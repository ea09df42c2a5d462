package io.shoal.cli;

import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.cache.lmdb.CacheDirectoryException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code shoal cache stat --path DIR}: per-shard figures of an LMDB cache directory. */
@Command(
    name = "stat",
    header = "Show an LMDB cache directory's figures per shard.",
    mixinStandardHelpOptions = true,
    description = {
      "Show an LMDB cache directory's layout and figures per shard and in total.",
      "",
      "Per shard: answers held, expired answers not yet evicted, expiry-index",
      "entries, the LMDB map's size and the bytes in use (and their share), the",
      "last transaction id and the reader slots in use. Works on a running node's",
      "cache too: read-only, one snapshot per shard."
    })
final class CacheStatCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--path", paramLabel = "DIR", required = true,
      description = "The LMDB cache directory (shoal.caches.<name>.lmdb.path)")
  Path path;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.SHARED_READ)) {
      List<CacheDirectory.ShardStat> stats = dir.stat(System.currentTimeMillis());
      out.println("cache   " + path.toAbsolutePath());
      out.println("layout  " + dir.layout().entrySet().stream()
          .map(e -> e.getKey() + "=" + e.getValue()).sorted().reduce((a, b) -> a + " " + b).orElse(""));
      out.println("in use  " + dir.inUse()
          .map(u -> "yes, by a running shoal" + (u.pid() > 0 ? " (pid " + u.pid() + ")" : "")
              + ": figures are one snapshot per shard")
          .orElse("no"));
      String row = "%-9s %10s %9s %9s %14s %14s %7s %10s %8s%n";
      out.printf(row, "shard", "entries", "expired", "indexed", "map bytes", "used bytes", "used", "last txn", "readers");
      long entries = 0;
      long expired = 0;
      long indexed = 0;
      long mapSize = 0;
      long used = 0;
      int broken = 0;
      for (CacheDirectory.ShardStat s : stats) {
        String label = String.format("shard-%02d", s.shard());
        if (s.error() != null) {
          out.printf("%-9s %s%n", label, s.error());
          broken++;
          continue;
        }
        out.printf(row, label, s.entries(), s.expired(), s.indexed(), s.mapSize(), s.mapUsed(),
            String.format("%.1f%%", s.mapUsedPercent()), s.lastTxnId(), s.readers());
        entries += s.entries();
        expired += s.expired();
        indexed += s.indexed();
        mapSize += s.mapSize();
        used += s.mapUsed();
      }
      out.println(String.format(row, "total", entries, expired, indexed, mapSize, used,
          String.format("%.1f%%", mapSize == 0 ? 0.0 : 100.0 * used / mapSize), "", "").stripTrailing());
      if (broken > 0) {
        spec.commandLine().getErr().println("shoal: " + broken + " shard(s) could not be read; run shoal cache check --path " + path);
        return 1;
      }
      return 0;
    } catch (CacheDirectoryException e) {
      return CacheCommand.unusable(spec, e, "");
    }
  }
}

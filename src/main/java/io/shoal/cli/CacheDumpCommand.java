package io.shoal.cli;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.cache.lmdb.CacheDirectoryException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.Callable;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Type;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code shoal cache dump --path DIR}: one line per stored answer. */
@Command(
    name = "dump",
    header = "List the answers in an LMDB cache directory.",
    mixinStandardHelpOptions = true,
    description = {
      "List the answers in an LMDB cache directory, one per line.",
      "",
      "  NAME TYPE CLASS FLAGS EXPIRES-AT TTL SIZE",
      "",
      "FLAGS: the DNSSEC bits the answer is keyed on (do, cd, do,cd or -).",
      "EXPIRES-AT: ISO-8601 UTC. TTL: seconds left, or 'expired'. SIZE: bytes of",
      "the answer. Shard by shard, in key order, expired answers included. Works on",
      "a running node's cache too: read-only, one snapshot per shard."
    })
final class CacheDumpCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--path", paramLabel = "DIR", required = true,
      description = "The LMDB cache directory (shoal.caches.<name>.lmdb.path)")
  Path path;

  @Option(names = "--name", paramLabel = "NAME", description = "Only the answers for this name (every type)")
  String name;

  @Option(names = "--limit", paramLabel = "N", description = "At most N lines")
  Long limit;

  @Option(names = {"-v", "--verbose"}, description = "Also print each answer in presentation format, TTLs as received")
  boolean verbose;

  @Override
  public Integer call() {
    if (limit != null && limit < 0) {
      throw new ParameterException(spec.commandLine(), "--limit must be 0 or more");
    }
    if (name != null) {
      CacheCommand.requireName(spec, name);
    }
    CacheDirectory dir;
    try {
      dir = CacheDirectory.open(path, CacheDirectory.Access.SHARED_READ);
    } catch (CacheDirectoryException e) {
      return CacheCommand.unusable(spec, e, "");
    }
    PrintWriter out = spec.commandLine().getOut();
    long now = System.currentTimeMillis();
    try (dir) {
      dir.dump(name, limit == null ? Long.MAX_VALUE : limit, entry -> print(out, entry, now));
      out.flush();
      return 0;
    } catch (CacheDirectoryException e) {
      spec.commandLine().getErr().println("shoal: " + e.getMessage());
      return 1;
    }
  }

  private void print(PrintWriter out, CacheDirectory.Entry entry, long now) {
    String key = entry.key() == null
        ? "(malformed key) - - -"
        : entry.key().name() + " " + Type.string(entry.key().qtype()) + " " + DClass.string(entry.key().qclass())
            + " " + CacheDirectory.flagNames(entry.key().flags());
    CachedAnswer a = entry.answer();
    if (a == null) {
      out.println(key + " - undecodable -");
      return;
    }
    long left = (a.expiresAtMillis() - now) / 1000;
    out.println(key + " " + Instant.ofEpochMilli(a.expiresAtMillis())
        + " " + (a.expiredAt(now) ? "expired" : String.valueOf(left)) + " " + a.wire().length);
    if (verbose) {
      try {
        new Message(a.wire()).toString().lines().forEach(l -> out.println(l.isBlank() ? "" : "    " + l));
      } catch (IOException e) {
        out.println("    (the answer does not parse: " + e.getMessage() + ")");
      }
    }
  }
}

package io.shoal.cli;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.cache.lmdb.CacheDirectoryException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Type;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code shoal cache dump}: a running node's answers as zone-file text that {@code shoal cache
 * load} reads back, or with {@code --path DIR} one line per answer of an LMDB directory.
 */
@Command(
    name = "dump",
    header = "Write a running node's answers as text, or list an LMDB directory.",
    mixinStandardHelpOptions = true,
    description = {
      "Without --path: write the running node's cached answers to standard output",
      "as zone-file text, each record with its remaining TTL and each answer",
      "introduced by a '; shoal-answer' comment (its cache key, rcode, flags and",
      "expiry). 'shoal cache load' puts such a file back, into this node or another,",
      "e.g. around the restart of a node with a memory cache. Through the admin",
      "endpoint (shoal.admin, 127.0.0.1:8559 by default); in cluster mode, this node's",
      "share of the cache. Expired answers are left out. The last line is",
      "'; end entries=N'; without it the dump was cut short (exit status 1).",
      "",
      "With --path DIR: list the answers in an LMDB cache directory, one per line.",
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

  @Option(names = "--path", paramLabel = "DIR",
      description = "Offline listing: the LMDB cache directory (shoal.caches.<name>.lmdb.path)")
  Path path;

  @Option(names = "--name-suffix", paramLabel = "NAME",
      description = "Running node: only answers for NAME and the names under it")
  String nameSuffix;

  @Mixin
  AdminOptions adminOptions;

  @Option(names = "--name", paramLabel = "NAME", description = "Only the answers for this name (every type)")
  String name;

  @Option(names = "--limit", paramLabel = "N", description = "At most N lines")
  Long limit;

  @Option(names = {"-v", "--verbose"}, description = "Also print each answer in presentation format, TTLs as received")
  boolean verbose;

  @Override
  public Integer call() throws InterruptedException {
    if (path == null) {
      if (name != null || limit != null || verbose) {
        throw new ParameterException(spec.commandLine(), "--name, --limit and --verbose list an LMDB directory: add --path DIR");
      }
      return online();
    }
    if (nameSuffix != null || adminOptions.admin != null || adminOptions.tokenFile != null) {
      throw new ParameterException(spec.commandLine(),
          "--path lists a directory offline; --name-suffix, --admin and --token-file are for a running node");
    }
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

  private int online() throws InterruptedException {
    if (nameSuffix != null) {
      CacheCommand.requireName(spec, nameSuffix);
    }
    AdminClient client = adminOptions.client(spec);
    if (client == null) {
      return 1;
    }
    PrintWriter out = spec.commandLine().getOut();
    try {
      HttpResponse<InputStream> response = client.dump(nameSuffix);
      try (BufferedReader body = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
        if (response.statusCode() != 200) {
          return AdminOptions.failed(spec, response.statusCode(),
              body.lines().collect(Collectors.joining("\n", "", "\n")));
        }
        String last = null;
        for (String line = body.readLine(); line != null; line = body.readLine()) {
          out.println(line);
          last = line;
        }
        out.flush();
        if (last == null || !last.startsWith("; end entries=")) {
          spec.commandLine().getErr().println("shoal: the dump was cut short (no end line); the node's log says why");
          return 1;
        }
        return 0;
      }
    } catch (IOException e) {
      out.flush();
      return adminOptions.unreachable(spec, e);
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

package io.shoal.cli;

import io.shoal.admin.AdminToken;
import io.shoal.config.AdminSettings;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.lmdb.CacheDirectory;
import io.shoal.cache.lmdb.CacheDirectoryException;
import io.shoal.cache.lmdb.CacheInUseException;
import io.shoal.wire.CacheKey;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Type;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code shoal cache ...}: operate on answer caches, through a running node or offline on an LMDB directory. */
@Command(
    name = "cache",
    header = "Flush, list, measure or check answer caches.",
    mixinStandardHelpOptions = true,
    description = {
      "Operate on answer caches: flush a name through a running node, or inspect,",
      "check and flush an LMDB cache directory offline (--path)."
    },
    subcommands = {CacheCommand.Flush.class, CacheCommand.Stat.class, CacheCommand.Dump.class, CacheCommand.Check.class},
    footer = {"", "Exit status: 0 success; 1 a failure (check: problems found); 2 bad usage, or",
        "a directory that is missing, not a shoal cache, or in use by a running shoal."})
public final class CacheCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "a subcommand is required (flush, stat, dump, check)");
  }

  /** Reports a directory the tools cannot use; exit status 2. */
  private static int unusable(CommandSpec spec, CacheDirectoryException e, String whenInUse) {
    String advice = e.inUse()
        .filter(u -> u.holder() == CacheInUseException.Holder.OTHER_PROCESS)
        .map(u -> whenInUse)
        .orElse("");
    spec.commandLine().getErr().println("shoal: " + e.getMessage() + advice);
    return 2;
  }

  /** Rejects a NAME that is not a domain name before anything is opened. */
  private static void requireName(CommandSpec spec, String name) {
    try {
      CacheKey.of(name, 1, 1, 0);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), "not a domain name: " + name + " (" + e.getMessage() + ")");
    }
  }

  private static int qtype(CommandSpec spec, String type) {
    if (type == null) {
      return 0;
    }
    int qtype = Type.value(type.toUpperCase(Locale.ROOT));
    if (qtype <= 0) {
      throw new ParameterException(spec.commandLine(), "unknown record type: " + type);
    }
    return qtype;
  }

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
  static final class Flush implements Callable<Integer> {
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
      int qtype = qtype(spec, type);
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
        requireName(spec, name);
      }
      CacheDirectory dir;
      try {
        dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_WRITE);
      } catch (CacheDirectoryException e) {
        return unusable(spec, e, "; stop that node first, or flush through it: shoal cache flush NAME --admin HOST:PORT");
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
      String query = "name=" + URLEncoder.encode(name, StandardCharsets.UTF_8)
          + (type == null ? "" : "&type=" + URLEncoder.encode(type, StandardCharsets.UTF_8));
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
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + endpoint + "/cache/flush?" + query))
          .timeout(Duration.ofSeconds(10))
          .header(AdminToken.HEADER, token)
          .POST(HttpRequest.BodyPublishers.noBody())
          .build();
      HttpResponse<String> response;
      try {
        response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
            .send(request, HttpResponse.BodyHandlers.ofString());
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
  static final class Stat implements Callable<Integer> {
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
        return unusable(spec, e, "");
      }
    }
  }

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
  static final class Dump implements Callable<Integer> {
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
        requireName(spec, name);
      }
      CacheDirectory dir;
      try {
        dir = CacheDirectory.open(path, CacheDirectory.Access.SHARED_READ);
      } catch (CacheDirectoryException e) {
        return unusable(spec, e, "");
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
  static final class Check implements Callable<Integer> {
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
        return unusable(spec, e,
            "; check needs the directory to itself: stop that node first (stat and dump can read a running node's cache)");
      }
    }
  }
}

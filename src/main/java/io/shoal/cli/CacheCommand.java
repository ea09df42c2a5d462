package io.shoal.cli;

import io.shoal.cache.lmdb.CacheDirectoryException;
import io.shoal.cache.lmdb.CacheInUseException;
import io.shoal.wire.CacheKey;
import java.util.Locale;
import org.xbill.DNS.Type;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code shoal cache ...}: operate on answer caches, through a running node or offline on an LMDB directory. */
@Command(
    name = "cache",
    header = "Flush, dump, load, list, measure or check answer caches.",
    mixinStandardHelpOptions = true,
    description = {
      "Operate on answer caches: flush a name through a running node, dump its",
      "answers as text and load them back, or inspect, check and flush an LMDB",
      "cache directory offline (--path)."
    },
    subcommands = {CacheFlushCommand.class, CacheStatCommand.class, CacheDumpCommand.class, CacheLoadCommand.class,
        CacheCheckCommand.class},
    footer = {"", "Exit status: 0 success; 1 a failure (check: problems found); 2 bad usage, or",
        "a directory that is missing, not a shoal cache, or in use by a running shoal."})
public final class CacheCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "a subcommand is required (flush, stat, dump, load, check)");
  }

  /** Reports a directory the tools cannot use; exit status 2. */
  static int unusable(CommandSpec spec, CacheDirectoryException e, String whenInUse) {
    String advice = e.inUse()
        .filter(u -> u.holder() == CacheInUseException.Holder.OTHER_PROCESS)
        .map(u -> whenInUse)
        .orElse("");
    spec.commandLine().getErr().println("shoal: " + e.getMessage() + advice);
    return 2;
  }

  /** Rejects a NAME that is not a domain name before anything is opened. */
  static void requireName(CommandSpec spec, String name) {
    try {
      CacheKey.of(name, 1, 1, 0);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), "not a domain name: " + name + " (" + e.getMessage() + ")");
    }
  }

  /** The record type named by {@code --type}, or 0 (every type) when none is given. */
  static int qtype(CommandSpec spec, String type) {
    if (type == null) {
      return 0;
    }
    int qtype = Type.value(type.toUpperCase(Locale.ROOT));
    if (qtype <= 0) {
      throw new ParameterException(spec.commandLine(), "unknown record type: " + type);
    }
    return qtype;
  }
}

package io.shoal.study.report;

import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.CacheMemoryPlan;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Scenario;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * summary.md of a cache_memory run: the resident bytes each member spent per cached answer at each
 * size, with and without a full collection first, and each member's figures as a ratio to the
 * scenario's baseline member at the same size.
 */
public final class CacheMemorySummary {
  /** The chart's file name in the run directory. */
  public static final String PNG = "cache_memory.png";

  /**
   * What the summary reports besides the rows.
   *
   * @param sizes the sizes this run measured, in order
   * @param setups how each member ran, by member name, in the order they ran
   * @param notRun members or sizes that did not run or failed, with the reason
   */
  public record Context(Scenario scenario, String startedAt, boolean quick, LoadSettings load, List<Integer> sizes,
      Map<String, String> setups, Map<String, String> notRun, HostFacts host, Map<String, String> versions,
      List<String> commands) {}

  private CacheMemorySummary() {}

  /** The members of the rows, in the order they ran. */
  static List<String> members(List<CacheMemoryRow> rows) {
    Set<String> names = new LinkedHashSet<>();
    rows.forEach(r -> names.add(r.member()));
    return List.copyOf(names);
  }

  /** The row of {@code member} at {@code size}, or null. */
  static CacheMemoryRow find(List<CacheMemoryRow> rows, String member, int size) {
    for (CacheMemoryRow r : rows) {
      if (r.member().equals(member) && r.entriesTarget() == size) {
        return r;
      }
    }
    return null;
  }

  /** {@code a / b}, or null when either is missing or b is not above 0. */
  static Double ratio(Double a, Double b) {
    return a == null || b == null || b <= 0 ? null : a / b;
  }

  /**
   * One line per size and member other than {@code baseline}: its bytes per answer without and
   * after a full collection, the baseline's, their ratios, and the CPU per warm hit of both.
   */
  public static List<String> atAGlance(List<CacheMemoryRow> rows, String baseline) {
    List<String> out = new ArrayList<>();
    for (int size : sizes(rows)) {
      CacheMemoryRow base = find(rows, baseline, size);
      for (String m : members(rows)) {
        CacheMemoryRow r = find(rows, m, size);
        if (m.equals(baseline) || r == null) {
          continue;
        }
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%,d answers: %s %s B per answer "
            + "(%s after a full GC)", size, m, bytes(r.bytesPerEntry()), bytes(r.bytesPerEntryAfterGc())));
        if (base == null) {
          line.append("; ").append(baseline).append(" not measured at this size");
        } else {
          line.append(", ").append(baseline).append(' ').append(bytes(base.bytesPerEntry())).append(" B: ")
              .append(times(ratio(r.bytesPerEntry(), base.bytesPerEntry()))).append(" (")
              .append(times(ratio(r.bytesPerEntryAfterGc(), base.bytesPerEntryAfterGc()))).append(" after GC");
          if (r.rssFilledQuietKib() != null) {
            line.append(", ").append(times(ratio(r.bytesPerEntryQuiet(), base.bytesPerEntryQuiet())))
                .append(" quiet: ").append(bytes(r.bytesPerEntryQuiet())).append(" B");
          }
          line.append(')')
              .append("; warm hits ").append(micros(r.cpuMicrosPerQuery())).append(" us CPU per query against ")
              .append(micros(base.cpuMicrosPerQuery())).append(" us (")
              .append(times(ratio(r.cpuMicrosPerQuery(), base.cpuMicrosPerQuery()))).append(')');
        }
        if (r.entries() < r.entriesTarget() || (base != null && base.entries() < base.entriesTarget())) {
          line.append("; not every name was cached (see the table)");
        }
        out.add(line.toString());
      }
    }
    List<Integer> sizes = sizes(rows);
    if (sizes.size() >= 2) {
      int small = sizes.get(sizes.size() - 2);
      int large = sizes.get(sizes.size() - 1);
      Double base = marginal(find(rows, baseline, small), find(rows, baseline, large));
      for (String m : members(rows)) {
        Double added = marginal(find(rows, m, small), find(rows, m, large));
        if (m.equals(baseline) || added == null) {
          continue;
        }
        out.add(String.format(Locale.ROOT, "from %,d to %,d answers: %s %s B per added answer, %s %s B: %s "
            + "(what each answer costs once the process's fixed growth is paid)", small, large, m, bytes(added),
            baseline, bytes(base), times(ratio(added, base))));
      }
    }
    return out;
  }

  /**
   * The resident bytes each answer added between two sizes (fresh processes both): the difference
   * of their growths over the difference of the answers held. What a fill costs whatever its size,
   * a collector's young generation or an allocator's arenas, cancels out; null without both.
   */
  static Double marginal(CacheMemoryRow small, CacheMemoryRow large) {
    if (small == null || large == null || large.entries() <= small.entries()) {
      return null;
    }
    long growth = (large.rssFilledKib() - large.rssIdleKib()) - (small.rssFilledKib() - small.rssIdleKib());
    return growth * 1024.0 / (large.entries() - small.entries());
  }

  /** The ratios table: one line per size, for each member but the baseline its figures over the baseline's. */
  static String ratios(List<CacheMemoryRow> rows, String baseline) {
    List<String> others = members(rows).stream().filter(m -> !m.equals(baseline)).toList();
    StringBuilder md = new StringBuilder("| answers |");
    StringBuilder rule = new StringBuilder("|---:|");
    for (String m : others) {
      md.append(' ').append(m).append(" bytes per answer | ").append(m).append(" after GC | ").append(m)
          .append(" quiet | ").append(m).append(" CPU per hit | ").append(m).append(" QPS |");
      rule.append("---:|---:|---:|---:|---:|");
    }
    md.append('\n').append(rule).append('\n');
    for (int size : sizes(rows)) {
      CacheMemoryRow base = find(rows, baseline, size);
      md.append(String.format(Locale.ROOT, "| %,d |", size));
      for (String m : others) {
        CacheMemoryRow r = find(rows, m, size);
        if (r == null || base == null) {
          md.append(" not run | | | | |");
          continue;
        }
        md.append(' ').append(times(ratio(r.bytesPerEntry(), base.bytesPerEntry()))).append(" | ")
            .append(times(ratio(r.bytesPerEntryAfterGc(), base.bytesPerEntryAfterGc()))).append(" | ")
            .append(r.rssFilledQuietKib() == null ? "" : times(ratio(r.bytesPerEntryQuiet(), base.bytesPerEntryQuiet())))
            .append(" | ").append(times(ratio(r.cpuMicrosPerQuery(), base.cpuMicrosPerQuery()))).append(" | ")
            .append(times(ratio(r.qps(), base.qps()))).append(" |");
      }
      md.append('\n');
    }
    return md.toString();
  }

  /** The sizes of the rows, in the order they ran. */
  static List<Integer> sizes(List<CacheMemoryRow> rows) {
    Set<Integer> sizes = new LinkedHashSet<>();
    rows.forEach(r -> sizes.add(r.entriesTarget()));
    return List.copyOf(sizes);
  }

  /** The whole file. */
  public static String render(Context c, List<CacheMemoryRow> rows) {
    Scenario s = c.scenario();
    CacheMemoryPlan p = s.cacheMemory();
    String baseline = s.baseline();
    StringBuilder md = StudySummary.opening(s, c.startedAt(),
        c.quick() ? "small caches and " + c.load().duration().toSeconds() + " s of warm hits" : null);
    md.append("\n\n");
    for (Map.Entry<String, String> skip : c.notRun().entrySet()) {
      md.append("- ").append(skip.getKey()).append(": ").append(skip.getValue()).append('\n');
    }
    if (!c.notRun().isEmpty()) {
      md.append('\n');
    }
    md.append("## At a glance\n\n");
    List<String> glance = atAGlance(rows, baseline);
    if (glance.isEmpty()) {
      md.append("- no size has a member measured beside the baseline, ").append(baseline).append('\n');
    }
    glance.forEach(l -> md.append("- ").append(l).append('\n'));
    md.append("\nBytes per answer are the growth of the process's resident set (VmRSS) over the answers it ")
        .append("said it held, so they include everything an answer costs the process: the entry, its key, ")
        .append("the indexes over it, and what the allocator or the heap keeps around it. ")
        .append("Absolute numbers hold for this host and these answers (one A record each) only.\n");
    if (members(rows).size() > 1) {
      md.append("\n## Ratios to ").append(baseline).append("\n\nEach figure over ").append(baseline)
          .append("'s at the same size in this run; \"after GC\" compares the readings after a full collection ")
          .append("(for a member without a collector, such as unbound, its one reading); \"quiet\" the readings ")
          .append("after the quiet time that follows it (unbound: its one reading again).\n\n")
          .append(ratios(rows, baseline));
    }
    md.append("\n## Per member and size\n\n| member | asked | cached | RSS idle MiB | RSS filled MiB | after GC MiB ")
        .append("| quiet MiB | bytes per answer | after GC | quiet | live heap bytes per answer | fill lost ")
        .append("| warm-hit qps | CPU us per hit |\n")
        .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (CacheMemoryRow r : rows) {
      md.append("| ").append(r.member()).append(" | ").append(String.format(Locale.ROOT, "%,d", r.entriesTarget()))
          .append(" | ").append(String.format(Locale.ROOT, "%,d", r.entries())).append(" | ")
          .append(mib(r.rssIdleKib())).append(" | ").append(mib(r.rssFilledKib())).append(" | ")
          .append(mib(r.rssFilledAfterGcKib())).append(" | ")
          .append(r.rssFilledQuietKib() == null ? "" : mib(r.rssFilledQuietKib())).append(" | ")
          .append(bytes(r.bytesPerEntry())).append(" | ").append(bytes(r.bytesPerEntryAfterGc())).append(" | ")
          .append(r.rssFilledQuietKib() == null ? "" : bytes(r.bytesPerEntryQuiet())).append(" | ")
          .append(r.heapBytesPerEntry() == null ? "" : bytes(r.heapBytesPerEntry())).append(" | ")
          .append(r.fillLost()).append(" | ").append(String.format(Locale.ROOT, "%.0f", r.qps())).append(" | ")
          .append(micros(r.cpuMicrosPerQuery())).append(" |\n");
    }
    md.append("\nData: [cache_memory.csv](cache_memory.csv); chart: [").append(PNG).append("](").append(PNG)
        .append(").\n");

    md.append("\n## Method\n\n");
    md.append("For each size, each member in turn starts as a fresh process, answers one query (the zone's SOA), ")
        .append("and idles until its resident set stops growing (two readings a second apart within 1%, at most ")
        .append(p.idleLimit().toSeconds()).append(" s); that is **RSS idle**. A shoal member first gets a full ")
        .append("collection (jcmd PID GC.run), so its idle reading is a settled process and not the garbage of its ")
        .append("start. dnsperf then asks each of the N names once (-n 1) at most ").append(p.fillQps())
        .append(" queries a second with up to ").append(p.fillOutstanding()).append(" outstanding, each a miss that ")
        .append("knotd answers, and the study waits (at most ").append(p.entriesLimit().toSeconds())
        .append(" s) until the member's own count says it holds them: shoal_cache_entries for shoal, msg.cache.count ")
        .append("from unbound-control stats_noreset for unbound; **cached** is that count. **RSS filled** is read ")
        .append("then; for shoal, a full collection follows and **after GC** is read again (unbound has no collector: ")
        .append("the same reading). Bytes per answer = (RSS filled - RSS idle) x 1024 / cached. Without a ")
        .append("collection, a JVM's resident set holds the garbage the fill made until the collector runs; after ")
        .append("one the garbage is gone, but the heap the collector grew stays committed and resident unless it ")
        .append("gives it back (G1 returns only what MaxHeapFreeRatio lets it), and the collection itself touches ")
        .append("pages, so the after-GC figure may be the higher one. Either is what an operator's memory limit ")
        .append("sees at some moment. The live heap column is the heap in use after each collection (jcmd ")
        .append("GC.heap_info) per answer: the answers' own share, without the heap's slack, the JIT's code or ")
        .append("the threads' native memory. At small sizes a few MiB of that other growth outweigh the answers; ")
        .append("read the largest size. ");
    if (!p.quiet().isZero()) {
      md.append("With a quiet time (here ").append(p.quiet().toSeconds()).append(" s), a shoal member's idle ")
          .append("reading is taken that long after its full collection rather than once it settles, and after ")
          .append("the filled full collection it is left that long again without queries and read once more: ")
          .append("**quiet**, what it holds once what it gives back on its own (heap regions uncommitted, the C ")
          .append("heap trimmed on the JVM's periodic intervals) is given back. Unbound gives nothing back over ")
          .append("time and is not waited for: its quiet figure is its filled reading. ");
    }
    md.append("Then dnsperf asks ")
        .append("warm hits, names drawn at random from the same N, for ").append(c.load().duration().toSeconds())
        .append(" s");
    if (!c.load().warmup().isZero()) {
      md.append(" after ").append(c.load().warmup().toSeconds()).append(" s of warm-up");
    }
    md.append("; CPU per hit is the member's user + system CPU (from /proc/PID/stat) over the queries it answered.\n");

    md.append("\n## Held constant\n\n");
    for (Map.Entry<String, String> setup : c.setups().entrySet()) {
      md.append("- member ").append(setup.getKey()).append(": ").append(setup.getValue()).append('\n');
    }
    Recipe r = s.recipe();
    md.append("- sizes: ").append(String.join(", ", c.sizes().stream().map(n -> String.format(Locale.ROOT, "%,d", n))
        .toList())).append(" names, each a fresh process per member\n");
    md.append("- upstream: knotd, zone `").append(r.zone()).append("` with a wildcard A record, TTL ")
        .append(r.stubTtl().toSeconds()).append(" s (nothing expires during a size)\n");
    md.append("- fill: dnsperf -n 1 -c 1 -T 1 -q ").append(p.fillOutstanding()).append(" -Q ").append(p.fillQps())
        .append(" over a file asking n0 to n(N-1) once each\n");
    md.append("- warm hits: dnsperf -c ").append(c.load().clients()).append(" -q ").append(c.load().outstanding())
        .append(" -T ").append(c.load().threads()).append(" -l ").append(c.load().duration().toSeconds())
        .append(" over ").append(r.queries().lines()).append(" names drawn from the N (seed ")
        .append(r.queries().seed()).append(")\n");
    StudySummary.appendJvmOptions(md, s);
    StudySummary.appendProvenance(md, c.host(), c.versions(), c.commands());
    md.append(StudySummary.rawFiles("each member's directory under `members/MEMBER/size-N/` holds its "
        + "configuration, log, dnsperf's output, and every reading: rss.txt, the statistics behind each count, and "
        + "jcmd's output"));
    return md.toString();
  }

  private static String bytes(Double v) {
    return v == null ? "?" : String.format(Locale.ROOT, "%,.0f", v);
  }

  private static String times(Double v) {
    return v == null ? "?" : String.format(Locale.ROOT, "%.2fx", v);
  }

  private static String micros(Double v) {
    return v == null ? "?" : String.format(Locale.ROOT, "%.1f", v);
  }

  private static String mib(long kib) {
    return String.format(Locale.ROOT, "%.1f", kib / 1024.0);
  }
}

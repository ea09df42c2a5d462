package io.shoal.study.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.Scenario;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.data.category.DefaultCategoryDataset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** cache_memory.csv and summary.md: bytes per answer from the readings, and shoal over unbound at each size. */
class CacheMemorySummaryTest {
  private static final Scenario CATALOG_SCENARIO = Scenario.load(Path.of("bench", "scenarios", "cache_memory.conf"));

  /** unbound and shoal at two sizes; shoal at 100,000 has figures chosen to give round ratios. */
  private static List<CacheMemoryRow> rows() {
    return List.of(
        // (20,000 - 16,000) KiB x 1024 / 4,096 = 1,000 B
        new CacheMemoryRow("unbound", 4096, 4096, 16_000, 20_000, 20_000, 100_000, 4.0, null, null, 0, null),
        // (210,000 - 200,000) x 1024 / 4,096 = 2,500 B; after GC (204,000 - 200,000) = 1,000 B;
        // live heap 4,000 KiB = 1,000 B; quiet (202,000 - 200,000) = 500 B
        new CacheMemoryRow("shoal-memory", 4096, 4096, 200_000, 210_000, 204_000, 80_000, 6.0, 18_000L, 22_000L, 0,
            202_000L),
        // 50,000 KiB over 100,000 answers = 512 B
        new CacheMemoryRow("unbound", 100_000, 100_000, 16_000, 66_000, 66_000, 90_000, 5.0, null, null, 0, null),
        // 100,000 KiB = 1,024 B (2.00x); after GC 75,000 KiB = 768 B (1.50x); quiet 50,000 KiB = 512 B (1.00x)
        new CacheMemoryRow("shoal-memory", 100_000, 99_990, 200_000, 300_000, 275_000, 45_000, 7.5, 18_000L, 68_000L,
            12, 250_000L));
  }

  @Test
  void bytesPerEntryIsTheResidentGrowthOverTheAnswersHeld() {
    List<CacheMemoryRow> r = rows();
    assertEquals(1000.0, r.get(0).bytesPerEntry(), 1e-9);
    assertEquals(1000.0, r.get(0).bytesPerEntryAfterGc(), 1e-9);
    assertNull(r.get(0).heapBytesPerEntry());
    assertEquals(2500.0, r.get(1).bytesPerEntry(), 1e-9);
    assertEquals(1000.0, r.get(1).bytesPerEntryAfterGc(), 1e-9);
    assertEquals(1000.0, r.get(1).heapBytesPerEntry(), 1e-9);
    assertEquals(500.0, r.get(1).bytesPerEntryQuiet(), 1e-9);
    // a peer is not read again when quiet: it gives nothing back, its filled reading stands
    assertEquals(1000.0, r.get(0).bytesPerEntryQuiet(), 1e-9);
    // over the answers actually held, not the names asked
    assertEquals(100_000.0 * 1024 / 99_990, r.get(3).bytesPerEntry(), 1e-9);
    // nothing held: no figure, not a division by zero
    assertNull(new CacheMemoryRow("x", 10, 0, 1, 2, 2, 0, null, null, null, 10, null).bytesPerEntry());
  }

  @Test
  void theCsvHasTheAgreedColumnsAndReadsBackWhatWasWritten() {
    assertEquals(List.of("member", "entries_target", "entries", "rss_idle_kib", "rss_filled_kib",
        "rss_filled_after_gc_kib", "bytes_per_entry", "bytes_per_entry_after_gc", "qps", "cpu_us_per_query"),
        CacheMemoryRow.COLUMNS.subList(0, 10));
    String text = StudyCsv.CACHE_MEMORY.render(rows());
    List<String> lines = text.lines().toList();
    assertEquals(String.join(",", CacheMemoryRow.COLUMNS), lines.get(0));
    assertEquals("unbound,4096,4096,16000,20000,20000,1000.0,1000.0,100000.0,4.00,,,0,,1000.0", lines.get(1));
    assertEquals("shoal-memory,4096,4096,200000,210000,204000,2500.0,1000.0,80000.0,6.00,18000,22000,0,202000,500.0",
        lines.get(2));
    assertEquals(rows(), StudyCsv.CACHE_MEMORY.parse(text));
    // a file published before the quiet reading reads back without it
    String old = String.join(",", CacheMemoryRow.COLUMNS.subList(0, 13)) + "\n"
        + "shoal-memory,4096,4096,200000,210000,204000,2500.0,1000.0,80000.0,6.00,18000,22000,0\n";
    assertNull(StudyCsv.CACHE_MEMORY.parse(old).get(0).rssFilledQuietKib());
    assertThrows(IllegalArgumentException.class, () -> StudyCsv.CACHE_MEMORY.parse("member,entries\nx,1\n"));
  }

  @Test
  void eachSizeComparesShoalWithUnboundAtTheSameSize() {
    List<String> table = CacheMemorySummary.ratios(rows(), "unbound").lines().toList();
    assertEquals("| answers | shoal-memory bytes per answer | shoal-memory after GC | shoal-memory quiet "
        + "| shoal-memory CPU per hit | shoal-memory QPS |", table.get(0));
    assertEquals("| 4,096 | 2.50x | 1.00x | 0.50x | 1.50x | 0.80x |", table.get(2));
    // 1,024.1 / 512, 768.1 / 512 and 512.1 / 512: over the 99,990 answers held
    assertEquals("| 100,000 | 2.00x | 1.50x | 1.00x | 1.50x | 0.50x |", table.get(3));
    assertEquals(4, table.size());

    List<String> glance = CacheMemorySummary.atAGlance(rows(), "unbound");
    assertEquals(3, glance.size());
    // unbound grew 4,000 then 50,000 KiB, shoal 10,000 then 100,000, over 95,904 and 95,894 more answers
    assertEquals(String.format(java.util.Locale.ROOT, "from 4,096 to 100,000 answers: shoal-memory %,.0f B per added "
        + "answer, unbound %,.0f B: %.2fx (what each answer costs once the process's fixed growth is paid)",
        90_000 * 1024.0 / 95_894, 46_000 * 1024.0 / 95_904, (90_000 * 1024.0 / 95_894) / (46_000 * 1024.0 / 95_904)),
        glance.get(2));
    assertEquals("4,096 answers: shoal-memory 2,500 B per answer (1,000 after a full GC), unbound 1,000 B: 2.50x "
        + "(1.00x after GC, 0.50x quiet: 500 B); warm hits 6.0 us CPU per query against 4.0 us (1.50x)", glance.get(0));
    assertTrue(glance.get(1).endsWith("; not every name was cached (see the table)"), glance.get(1));
  }

  @Test
  void aSizeWithoutTheBaselineSaysSo() {
    // unbound failed at 100,000: shoal's row stands alone
    List<CacheMemoryRow> without = List.of(rows().get(0), rows().get(1), rows().get(3));
    assertEquals("| 100,000 | not run | | | | |", CacheMemorySummary.ratios(without, "unbound").lines().toList().get(3));
    assertTrue(CacheMemorySummary.atAGlance(without, "unbound").get(1).contains("; unbound not measured at this size"));
  }

  @Test
  void theSummaryHoldsTheTableTheMethodAndWhatFailed() {
    Map<String, String> setups = new LinkedHashMap<>();
    setups.put("unbound", "unbound, 1 thread");
    setups.put("shoal-memory", "shoal, memory cache");
    String md = CacheMemorySummary.render(new CacheMemorySummary.Context(CATALOG_SCENARIO, "2026-12-02T20:00:00Z",
        false, CATALOG_SCENARIO.recipe().load(), List.of(4096, 100_000), setups,
        Map.of("shoal-memory at 1000000", "failed: out of memory"), new HostFacts("cpu", 2, "linux", "disk"),
        Map.of(), List.of("dnsperf ...")), rows());
    assertTrue(md.startsWith("# Study `cache_memory`"), md);
    assertTrue(md.contains("- shoal-memory at 1000000: failed: out of memory"), md);
    assertTrue(md.contains("## Ratios to unbound"), md);
    assertTrue(md.contains("| 100,000 | 2.00x | 1.50x | 1.00x | 1.50x | 0.50x |"), md);
    assertTrue(md.contains("| shoal-memory | 100,000 | 99,990 | 195.3 | 293.0 | 268.6 | 244.1 | 1,024 | 768 | 512 | 512 "
        + "| 12 | 45000 | 7.5 |"), md);
    assertTrue(md.contains("| unbound | 4,096 | 4,096 | 15.6 | 19.5 | 19.5 |  | 1,000 | 1,000 |  |  | 0 | 100000 | 4.0 |"),
        md);
    assertTrue(md.contains("With a quiet time (here 32 s)"), md);
    assertTrue(md.contains("jcmd PID GC.run"), md);
    assertTrue(md.contains("- sizes: 4,096, 100,000 names"), md);
    assertTrue(md.contains("- member unbound: unbound, 1 thread"), md);
    assertTrue(md.contains("- shoal JVM options: -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Xmx1331m -Xms8m "), md);
    assertTrue(!md.contains("Quick smoke run"), md);
  }

  @Test
  void theChartHasABarPerMemberAndOnesAfterGcAndQuietForTheJvm(@TempDir Path dir) throws IOException {
    DefaultCategoryDataset data = StudyCharts.cacheMemoryData(rows());
    assertEquals(List.of("unbound", "shoal-memory", "shoal-memory after GC", "shoal-memory quiet"), data.getRowKeys());
    assertEquals(List.of("4,096", "100,000"), data.getColumnKeys());
    assertEquals(2500.0, data.getValue("shoal-memory", "4,096").doubleValue(), 1e-9);
    assertEquals(1000.0, data.getValue("shoal-memory after GC", "4,096").doubleValue(), 1e-9);
    assertEquals(500.0, data.getValue("shoal-memory quiet", "4,096").doubleValue(), 1e-9);
    Path png = dir.resolve(CacheMemorySummary.PNG);
    StudyCharts.writeCacheMemory(png, rows(), "cache_memory, test");
    assertTrue(Files.size(png) > 1000);
  }
}

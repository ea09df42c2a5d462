package io.shoal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.cli.ShoalCommand;
import io.shoal.config.ShoalConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HeapBudgetTest {

  private static ShoalConfig config(String... lines) {
    Config raw = ConfigFactory.parseString(String.join("\n", lines)).withFallback(ConfigFactory.load()).resolve();
    return ShoalConfig.from(raw);
  }

  @Test
  void theHeapGrowsWithEveryAnswerTheCachesMayHoldInMemory() {
    ShoalConfig shipped = config();
    assertEquals(100_000, HeapBudget.answersInHeap(shipped));
    // 256 MiB and 100,000 x 1 KiB (97.7 MiB, rounded up)
    assertEquals("-Xmx354m", HeapBudget.javaHeapOption(shipped));

    ShoalConfig two = config(
        "shoal.caches.answers.max_entries = 1000000",
        "shoal.caches.disk = ${shoal.caches.answers}",
        "shoal.caches.disk { backend = lmdb, max_entries = 50000000, lmdb.path = \"unused\", lmdb.hot_entries = 20000 }");
    // the LMDB cache's answers are on disk: only its hot ones count
    assertEquals(1_020_000, HeapBudget.answersInHeap(two));
    // ... and, with when_full = evict_one, the expiry order of all of them
    assertEquals(50_000_000, HeapBudget.lmdbAnswersOrdered(two));
    assertEquals(HeapBudget.BASE_BYTES + 1_020_000 * HeapBudget.BYTES_PER_ANSWER
        + 50_000_000 * HeapBudget.LMDB_ORDER_BYTES_PER_ANSWER, HeapBudget.bytes(two));
    ShoalConfig sampled = config(
        "shoal.caches.answers { backend = lmdb, when_full = sample, lmdb.path = \"unused\", lmdb.hot_entries = 20000 }");
    assertEquals(0, HeapBudget.lmdbAnswersOrdered(sampled));
  }

  @Test
  void aHeapShortOfMaxEntriesIsWarnedAboutWithTheOptionThatFitsIt() {
    ShoalConfig big = config("shoal.caches.answers.max_entries = 2000000");
    String warning = HeapBudget.shortfall(big, 512L << 20);
    assertTrue(warning.contains("at most 512 MiB"), warning);
    assertTrue(warning.contains("2209 MiB"), warning);
    assertTrue(warning.contains("2000000 cached answers (max_entries)"), warning);
    assertTrue(warning.contains("-Xmx2210m"), warning);
    assertNull(HeapBudget.shortfall(big, HeapBudget.bytes(big)));
    assertNull(HeapBudget.shortfall(config(), 4L << 30));
  }

  @Test
  void theSystemdUnitsHeapIsTheOneTheShippedConfigurationNeeds() throws Exception {
    String unit = Files.readString(Path.of("packaging", "systemd", "shoal.service"));
    java.util.regex.Matcher exec = java.util.regex.Pattern.compile("(?m)^ExecStart=.* (-Xmx\\S+) ").matcher(unit);
    assertTrue(exec.find(), "the unit's ExecStart sets -Xmx");
    assertEquals(HeapBudget.javaHeapOption(config()), exec.group(1));
  }

  @Test
  void configJavaHeapPrintsOnlyTheOption(@TempDir Path dir) throws Exception {
    Path conf = dir.resolve("shoal.conf");
    Files.writeString(conf, "shoal.caches.answers.max_entries = 1100000\n");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream was = System.out;
    int code;
    try {
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      code = ShoalCommand.commandLine().execute("config", "--java-heap", "--config", conf.toString());
    } finally {
      System.setOut(was);
    }
    assertEquals(0, code);
    assertEquals("-Xmx1331m\n", out.toString(StandardCharsets.UTF_8));
  }
}

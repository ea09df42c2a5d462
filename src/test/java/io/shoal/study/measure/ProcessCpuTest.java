package io.shoal.study.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.host.StudyException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CPU time from /proc/PID/stat, and CPU per answered query. */
class ProcessCpuTest {

  /**
   * Recorded on Linux 6.x from a busy python3 copied to a file named "py (x) y)": utime 68 and
   * stime 30 ticks. The name holds spaces and parentheses, including a ")" before the real end.
   */
  private static final String BUSY_PROCESS_WITH_AN_ODD_NAME = "14945 (py (x) y)) R 14942 14942 10086 0 -1 4194304 "
      + "833 0 0 0 68 30 0 0 20 0 1 0 83788 14286848 2011 18446744073709551615 4321280 7148169 140728993496144 0 0 "
      + "0 0 16781312 2 0 0 0 17 1 0 0 0 0 0 9723336 11027064 620830720 140728993503857 140728993503982 "
      + "140728993503982 140728993505257 0";

  @Test
  void userAndSystemTicksAreFieldsFourteenAndFifteenCountedFromTheNamesEnd() {
    assertEquals(68 + 30, ProcessCpu.ticksOf(BUSY_PROCESS_WITH_AN_ODD_NAME));
  }

  @Test
  void reapedChildrenTicksAreFieldsSixteenAndSeventeen() {
    // the same line: cutime and cstime are 0 0; a parent's line with 1234 and 56 for its reaped children
    assertEquals(0, ProcessCpu.childrenTicksOf(BUSY_PROCESS_WITH_AN_ODD_NAME));
    String parent = BUSY_PROCESS_WITH_AN_ODD_NAME.replace(" 68 30 0 0 20 ", " 68 30 1234 56 20 ");
    assertEquals(1234 + 56, ProcessCpu.childrenTicksOf(parent));
    assertEquals(68 + 30, ProcessCpu.ticksOf(parent));
  }

  @Test
  void aChildThatExitedAndWasWaitedForCountsInThisProcesssChildrenTicks(@TempDir Path dir) throws Exception {
    long before = ProcessCpu.reapedChildrenTicks(dir.resolve("before.txt"));
    // a child that burns some CPU: at least a few ticks of user time, bounded by a count
    Process p = new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done").start();
    assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
    long after = ProcessCpu.reapedChildrenTicks(dir.resolve("after.txt"));
    assertTrue(after > before, before + " -> " + after);
    assertTrue(Files.readString(dir.resolve("after.txt")).startsWith("self: "));
  }

  @Test
  void aLineThatIsNotAStatLineIsAClearError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProcessCpu.ticksOf("14945 R 1 2"));
    assertTrue(e.getMessage().contains("no process name"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> ProcessCpu.ticksOf("14945 (short) R 1 2 3"));
  }

  @Test
  void cpuPerQueryIsTheCpuTimeOverTheCompletedQueriesInMicroseconds() {
    ProcessCpu.Sample before = new ProcessCpu.Sample(1_000, 40);
    ProcessCpu.Sample after = new ProcessCpu.Sample(1_375, 65);
    assertEquals(0.25, ProcessCpu.compilerSecondsBetween(before, after, 100), 1e-12);
    // a compiler thread that ended meanwhile takes its ticks out of the later sum: never below 0
    assertEquals(0.0, ProcessCpu.compilerSecondsBetween(after, before, 100), 1e-12);
    double seconds = ProcessCpu.secondsBetween(before, after, 100);
    assertEquals(3.75, seconds, 1e-12);
    // 3.75 s of CPU for 300,000 answers: 12.5 us each
    assertEquals(12.5, ProcessCpu.microsPerQuery(seconds, 300_000), 1e-9);
    assertNull(ProcessCpu.microsPerQuery(seconds, 0));
    assertNull(ProcessCpu.microsPerQuery(null, 300_000));
  }

  @Test
  void aSampleOfThisProcessSumsItsPidsAndKeepsTheRawLines(@TempDir Path dir) throws Exception {
    long self = ProcessHandle.current().pid();
    Path audit = dir.resolve("cpu.txt");
    ProcessCpu.Sample once = ProcessCpu.sample(List.of(self), audit);
    ProcessCpu.Sample twice = ProcessCpu.sample(List.of(self, self), dir.resolve("cpu2.txt"));
    // this JVM has run the test framework: it has used CPU, and the second reading is not less
    assertTrue(once.ticks() > 0, Files.readString(audit));
    // this JVM has compiled the test framework's hot methods: its compiler threads are a part of its CPU
    assertTrue(once.compilerTicks() > 0 && once.compilerTicks() <= once.ticks(), Files.readString(audit));
    assertTrue(Files.readString(audit).contains(" thread "), "the compiler threads' lines are kept");
    assertTrue(twice.ticks() >= 2 * once.ticks(), Files.readString(dir.resolve("cpu2.txt")));
    assertTrue(Files.readString(audit).startsWith(self + ": " + self + " ("), Files.readString(audit));
  }

  @Test
  void aProcessThatIsGoneIsAStudyErrorNamingIt(@TempDir Path dir) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("true").start();
    p.waitFor();
    long pid = p.pid();
    StudyException e = assertThrows(StudyException.class,
        () -> ProcessCpu.sample(List.of(pid), dir.resolve("cpu.txt")));
    assertTrue(e.getMessage().contains("process " + pid + " is gone"), e.getMessage());
  }
}

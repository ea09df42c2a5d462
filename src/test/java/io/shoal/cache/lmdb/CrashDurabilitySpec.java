package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheDirectorySpec.assertContains;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;


import io.shoal.cache.CachedAnswer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.Assert;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/**
 * What each sync mode promises after a process crash, tested with real ones: a child JVM fills an
 * LMDB cache write-through and reports every fill whose commit completed; the test kills it with
 * SIGKILL in the middle of a burst, twice on the same path. After each kill the directory
 * must pass {@code shoal cache check} and hold every acknowledged answer, and the next run opens
 * it the way a node does and must serve every answer acknowledged so far as a hit.
 *
 * <p>All four modes must pass, periodic and none included: a commit has written its pages to the
 * kernel before it returns, and the kernel's page cache outlives the process. What NOSYNC risks is
 * an operating-system crash or power loss before write-back, which a test cannot produce.
 */
public class CrashDurabilitySpec extends JUnitSuite {
  private static final int KILLS = 2;
  private static final Path JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void fullKeepsEveryAcknowledgedFillThroughSigkill() throws Exception {
    survivesKills(SyncMode.FULL);
  }

  @Test
  public void noMetaKeepsEveryAcknowledgedFillThroughSigkill() throws Exception {
    survivesKills(SyncMode.NO_META);
  }

  @Test
  public void periodicKeepsEveryAcknowledgedFillThroughSigkill() throws Exception {
    survivesKills(SyncMode.PERIODIC);
  }

  @Test
  public void noneKeepsEveryAcknowledgedFillThroughSigkill() throws Exception {
    survivesKills(SyncMode.NONE);
  }

  private void survivesKills(SyncMode mode) throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    Random random = new Random(mode.ordinal());
    Set<String> acknowledged = new LinkedHashSet<>();
    for (int run = 1; run <= KILLS; run++) {
      try (Child child = Child.start(tmp, path, mode, run, acknowledged, Integer.MAX_VALUE)) {
        child.awaitReady(acknowledged.size());
        // Somewhere in the burst: after a few hundred commits, with many fills in flight.
        int target = 200 + random.nextInt(600);
        child.awaitAcks(target);
        child.kill();
        assertTrue(mode + " run " + run + ": no acknowledgements before the kill", child.acks().size() >= target);
        acknowledged.addAll(child.acks());
      }
      try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_READ)) {
        CacheDirectory.CheckReport report = dir.check(System.currentTimeMillis());
        assertTrue(mode + " after kill " + run + ": " + report.problems(), report.clean());
        for (String name : acknowledged) {
          CachedAnswer stored = dir.answer(FillUntilKilled.keyFor(name));
          assertNotNull(mode + " after kill " + run + ": acknowledged " + name + " is gone", stored);
          assertArrayEquals(FillUntilKilled.answerFor(name, 0).wire(), stored.wire());
        }
      }
    }
  }

  @Test
  public void aRunningCacheCanBeReadButNotCheckedFlushedOrShared() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    // 300 fills, then the child idles with its cache open: a node at rest.
    try (Child child = Child.start(tmp, path, SyncMode.PERIODIC, 1, Set.of(), 300)) {
      child.awaitReady(0);
      child.awaitAcks(300);
      long pid = child.process.pid();

      for (CacheDirectory.Access access : List.of(CacheDirectory.Access.EXCLUSIVE_READ, CacheDirectory.Access.EXCLUSIVE_WRITE)) {
        CacheDirectoryException e = Assert.assertThrows(CacheDirectoryException.class, () -> CacheDirectory.open(path, access));
        assertEquals(CacheInUseException.Holder.OTHER_PROCESS, e.inUse().orElseThrow().holder());
        assertEquals("the lock file names the node", pid, e.inUse().orElseThrow().pid());
        assertContains(e.getMessage(), "is in use by a running shoal (pid " + pid + ")");
      }
      try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.SHARED_READ)) {
        assertEquals(pid, dir.inUse().orElseThrow().pid());
        long entries = dir.stat(System.currentTimeMillis()).stream().mapToLong(CacheDirectory.ShardStat::entries).sum();
        assertEquals("a reader sees the running node's commits", 300, entries);
        assertEquals(5, dir.dump(null, 5, e -> assertNotNull(e.answer())));
      }

      // A second node on the same directory stops before it binds anything, naming the holder.
      Path log = tmp.newFile().toPath();
      Process second = new ProcessBuilder(command("io.shoal.Main", "serve",
          "-Dshoal.listen.udp=127.0.0.1:0", "-Dshoal.listen.tcp=127.0.0.1:0",
          "-Dshoal.upstreams.default.servers.0=127.0.0.1:9", "-Dshoal.metrics.enabled=off", "-Dshoal.admin.enabled=off",
          "-Dshoal.caches.answers.backend=lmdb", "-Dshoal.caches.answers.lmdb.path=" + path,
          "-Dshoal.caches.answers.lmdb.shard_count=" + FillUntilKilled.SHARDS))
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      int status = exit(second, 30);
      assertEquals(Files.readString(log), 1, status);
      assertContains(Files.readString(log), "shoal.caches.answers.lmdb.path: " + path
          + " is in use by a running shoal (pid " + pid + ")");
      child.kill();
    }
    // As an operator would after a crash: a killed node leaves no lock behind, and check passes.
    Path log = tmp.newFile().toPath();
    Process check = new ProcessBuilder(command("io.shoal.Main", "cache", "check", "--path", path.toString()))
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    int checked = exit(check, 60);
    assertEquals(Files.readString(log), 0, checked);
    assertContains(Files.readString(log), "clean");
  }

  private static List<String> command(String main, String... args) {
    List<String> cmd = new ArrayList<>(List.of(JAVA.toString(),
        "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
        "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:CICompilerCount=1", "-cp", System.getProperty("java.class.path"), main));
    cmd.addAll(List.of(args));
    return cmd;
  }

  private static int exit(Process p, int seconds) throws InterruptedException {
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      Assert.fail("the child did not exit within " + seconds + " s");
    }
    return p.exitValue();
  }

  /** A running {@link FillUntilKilled}, its stdout read line by line as it comes. */
  private static final class Child implements AutoCloseable {
    final Process process;
    private final Path stderr;
    private final Set<String> acks = ConcurrentHashMap.newKeySet();
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private Child(Process process, Path stderr) {
      this.process = process;
      this.stderr = stderr;
      this.reader = new Thread(this::read, "child-stdout");
      reader.setDaemon(true);
      reader.start();
    }

    static Child start(TemporaryFolder tmp, Path path, SyncMode mode, int run, Set<String> acknowledged, int fills)
        throws IOException {
      Path ackFile = tmp.newFile().toPath();
      Files.write(ackFile, acknowledged);
      Path stderr = tmp.newFile().toPath();
      Process p = new ProcessBuilder(command(FillUntilKilled.class.getName(),
              path.toString(), mode.name(), String.valueOf(run), ackFile.toString(), String.valueOf(fills)))
          .redirectError(stderr.toFile())
          .start();
      return new Child(p, stderr);
    }

    /** Only whole lines count: a kill may cut the last one short, and a cut ACK is no promise. */
    private void read() {
      try (InputStream in = process.getInputStream()) {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != -1) {
          if (b != '\n') {
            line.write(b);
            continue;
          }
          String text = line.toString(StandardCharsets.US_ASCII);
          line.reset();
          if (text.startsWith("ACK ")) {
            acks.add(text.substring(4));
          } else {
            lines.add(text);
          }
        }
      } catch (IOException e) {
        // The stream closes when the child dies.
      }
    }

    void awaitReady(int acknowledged) throws Exception {
      awaitLine("READY", 60);
      assertTrue(output(), lines.contains("VERIFIED " + acknowledged));
    }

    void awaitAcks(int n) throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (acks.size() < n) {
        if (!process.isAlive() || System.nanoTime() > deadline) {
          Assert.fail(acks.size() + " of " + n + " fills acknowledged; " + output());
        }
        Thread.sleep(5);
      }
    }

    private void awaitLine(String wanted, int seconds) throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      while (!lines.contains(wanted)) {
        if (!process.isAlive() && !reader.isAlive() || System.nanoTime() > deadline
            || lines.stream().anyMatch(l -> l.startsWith("FAILED"))) {
          Assert.fail("no " + wanted + " from the child: " + output());
        }
        Thread.sleep(10);
      }
    }

    /** SIGKILL (destroyForcibly on Linux), then every line the child wrote before it died. */
    void kill() throws Exception {
      process.destroyForcibly();
      assertTrue("the child died", process.waitFor(30, TimeUnit.SECONDS));
      reader.join(TimeUnit.SECONDS.toMillis(30));
    }

    Set<String> acks() {
      return acks;
    }

    String output() {
      String err;
      try {
        err = Files.readString(stderr);
      } catch (IOException e) {
        err = e.toString();
      }
      return "stdout (ACK lines left out): " + lines + "\nstderr:\n" + err;
    }

    @Override
    public void close() throws Exception {
      if (process.isAlive()) {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }
}

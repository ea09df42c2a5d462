package io.shoal.study.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RawArchiveTest {
  private static final Path TAR = Path.of("/usr/bin/tar").toFile().exists() ? Path.of("/usr/bin/tar") : Path.of("/bin/tar");

  @Test
  void packsTheRawDirectoriesLeavesThePageAndRemovesWhatItPacked(@TempDir Path run, @TempDir Path unpacked)
      throws Exception {
    Files.writeString(run.resolve("summary.md"), "# page\n");
    Files.writeString(run.resolve("results.csv"), "member\n");
    Files.createDirectories(run.resolve("versions"));
    Files.writeString(run.resolve("versions/knotd-version.txt"), "3.2.6\n");
    Path member = Files.createDirectories(run.resolve("members/shoal-memory/round-1"));
    Files.writeString(member.resolve("dnsperf.txt"), "Queries per second: 1000\n".repeat(200));
    Files.createDirectories(member.resolve("data/shard-0"));
    Files.writeString(member.resolve("data/shard-0/data.mdb"), "lmdb pages");
    Files.createDirectories(run.resolve("knotd/db"));
    Files.writeString(run.resolve("knotd/knot.conf"), "server:\n");
    Files.createDirectories(run.resolve("tls"));
    Files.writeString(run.resolve("tls/cert.pem"), "cert");
    Files.writeString(run.resolve("tls/key.pem"), "secret");

    try (StartedProcesses processes = new StartedProcesses()) {
      assertEquals(List.of("knotd", "members", "tls"), RawArchive.pack(run, TAR, processes));
      assertTrue(processes.commands().stream().anyMatch(c -> c.contains("-cJf")), processes.commands().toString());
    }
    assertTrue(Files.isRegularFile(run.resolve(RawArchive.FILE)));
    assertFalse(Files.exists(run.resolve("members")));
    assertFalse(Files.exists(run.resolve("knotd")));
    assertFalse(Files.exists(run.resolve("tls")));
    assertTrue(Files.isRegularFile(run.resolve("versions/knotd-version.txt")));
    assertTrue(Files.isRegularFile(run.resolve("summary.md")));
    assertTrue(Files.isRegularFile(run.resolve("results.csv")));

    Process tar = new ProcessBuilder(TAR.toString(), "-xJf", run.resolve(RawArchive.FILE).toString(), "-C",
        unpacked.toString()).redirectErrorStream(true).start();
    String said = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(tar.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, tar.exitValue(), said);
    assertEquals("Queries per second: 1000\n".repeat(200),
        Files.readString(unpacked.resolve("members/shoal-memory/round-1/dnsperf.txt")));
    assertTrue(Files.isRegularFile(unpacked.resolve("knotd/knot.conf")));
    assertTrue(Files.isRegularFile(unpacked.resolve("tls/cert.pem")));
    // data paths, knotd's database and the private key are never packed
    assertFalse(Files.exists(unpacked.resolve("members/shoal-memory/round-1/data")));
    assertFalse(Files.exists(unpacked.resolve("knotd/db")));
    assertFalse(Files.exists(unpacked.resolve("tls/key.pem")));
  }

  @Test
  void aRunWithNothingRawWritesNoArchive(@TempDir Path run) throws Exception {
    Files.writeString(run.resolve("summary.md"), "# page\n");
    try (StartedProcesses processes = new StartedProcesses()) {
      assertEquals(List.of(), RawArchive.pack(run, TAR, processes));
    }
    assertFalse(Files.exists(run.resolve(RawArchive.FILE)));
  }

  @Test
  void aFailedTarLeavesTheDirectoriesUnpacked(@TempDir Path run) throws IOException {
    Files.createDirectories(run.resolve("members/m"));
    Files.writeString(run.resolve("members/m/server.log"), "log");
    try (StartedProcesses processes = new StartedProcesses()) {
      StudyException e = assertThrows(StudyException.class, () -> RawArchive.pack(run, Path.of("/bin/false"), processes));
      assertTrue(e.getMessage().contains("stay unpacked"), e.getMessage());
    }
    assertTrue(Files.isRegularFile(run.resolve("members/m/server.log")));
    assertFalse(Files.exists(run.resolve(RawArchive.FILE)));
  }
}

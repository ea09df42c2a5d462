package io.shoal.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** packaging/systemd/shoal.service is a unit systemd accepts, hardened, and one whose reload reloads. */
class SystemdUnitTest {
  private static final Path UNIT = Path.of("packaging/systemd/shoal.service");

  private static String unit() throws IOException {
    return Files.readString(UNIT);
  }

  private static Path systemdAnalyze() {
    for (String dir : List.of("/usr/bin", "/bin", "/usr/local/bin")) {
      Path p = Path.of(dir, "systemd-analyze");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  @Test
  void systemdAnalyzeVerifiesItWithoutAWord() throws Exception {
    Path analyze = systemdAnalyze();
    assumeTrue(analyze != null, "systemd-analyze is not installed (Debian: the systemd package)");
    String text = unit();
    // verify checks that ExecStart's program exists: on a machine without Java where the unit
    // expects it, point it at one that does; every other line is verified as written.
    Matcher exec = Pattern.compile("(?m)^ExecStart=(\\S+)").matcher(text);
    assertTrue(exec.find(), "the unit has an ExecStart");
    if (!Files.isExecutable(Path.of(exec.group(1)))) {
      text = text.replace("ExecStart=" + exec.group(1), "ExecStart=" + analyze);
    }
    Path dir = Files.createTempDirectory("shoal-unit");
    Path copy = Files.writeString(dir.resolve("shoal.service"), text);
    Process p = new ProcessBuilder(analyze.toString(), "verify", copy.toString())
        .directory(dir.toFile()).redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "systemd-analyze verify finished");
    String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), said);
    // Unknown or misspelled keys are only warnings (exit 0): none is allowed.
    assertEquals("", said.strip(), "systemd-analyze verify printed warnings");
  }

  @Test
  void itDropsPrivilegesAndHardensTheService() throws Exception {
    String text = unit();
    for (String line : List.of("DynamicUser=yes", "StateDirectory=shoal", "WorkingDirectory=/var/lib/shoal",
        "NoNewPrivileges=yes", "CapabilityBoundingSet=CAP_NET_BIND_SERVICE", "AmbientCapabilities=CAP_NET_BIND_SERVICE",
        "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "PrivateDevices=yes",
        "ProtectKernelTunables=yes", "ProtectKernelModules=yes", "ProtectControlGroups=yes", "RestrictNamespaces=yes",
        "RestrictSUIDSGID=yes", "LockPersonality=yes", "SystemCallFilter=@system-service",
        "SystemCallArchitectures=native", "KillSignal=SIGTERM", "Restart=on-failure")) {
      assertTrue(text.lines().anyMatch(line::equals), "missing: " + line);
    }
    // The JIT writes the code it runs: this one would stop the JVM at start.
    assertFalse(text.lines().anyMatch(l -> l.startsWith("MemoryDenyWriteExecute=yes")));
  }

  /**
   * A JVM exits on a SIGHUP it does not handle: the unit's ExecReload sends one, so the command
   * it runs must be the one that handles it. (ReloadProcessSpec sends a real SIGHUP to a node.)
   */
  @Test
  void itsReloadSendsTheSignalServeHandles() throws Exception {
    assertTrue(unit().lines().anyMatch("ExecReload=/bin/kill -HUP $MAINPID"::equals));
    assertTrue(unit().lines().anyMatch(l -> l.startsWith("ExecStart=") && l.contains(" serve ")));
    String serve = Files.readString(Path.of("src/main/java/io/shoal/cli/ServeCommand.java"));
    assertTrue(serve.contains("new Signal(\"HUP\")"), "ServeCommand must handle SIGHUP for systemctl reload");
  }
}

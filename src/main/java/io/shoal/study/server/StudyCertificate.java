package io.shoal.study.server;

import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The self-signed certificate a member queried over DoT or DoH presents: P-256, for localhost and
 * 127.0.0.1, made with the openssl command in the member's directory. dnsperf does not check it;
 * every member of a run gets one made the same way, so no server pays for a costlier key.
 *
 * @param certificate the PEM certificate
 * @param privateKey its unencrypted PKCS#8 key
 */
public record StudyCertificate(Path certificate, Path privateKey) {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  /** Makes a new certificate and key in {@code dir} (created if needed); the command goes to the run's record. */
  public static StudyCertificate make(Path dir, StartedProcesses processes, Prerequisites.Tools tools)
      throws IOException, StudyException {
    Files.createDirectories(dir);
    Path cert = dir.resolve("cert.pem").toAbsolutePath();
    Path key = dir.resolve("key.pem").toAbsolutePath();
    StartedProcesses.Completed c = processes.run(List.of(tools.path("openssl"), "req", "-x509", "-newkey", "ec",
        "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.toString(), "-out", cert.toString(),
        "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        dir.resolve("openssl.txt"), LIMIT);
    if (c.exitCode() != 0 || !Files.isReadable(cert) || !Files.isReadable(key)) {
      throw new StudyException("openssl could not make the test certificate (exit " + c.exitCode() + "): "
          + c.output().strip());
    }
    return new StudyCertificate(cert, key);
  }
}

package io.shoal.transport.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.InvalidConfigException;
import io.shoal.config.TlsSettings;
import io.shoal.testing.TestCertificates;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The PEM files operators bring: which keys are read, and what an unusable pair is told as. */
class ServerCertificateTest {
  private static TestCertificates ca;
  private static Path[] pair;

  @BeforeAll
  static void issue() throws Exception {
    ca = TestCertificates.newCa();
    pair = ca.issue("unit");
  }

  private static TlsSettings files(Path certificate, Path key) {
    return new TlsSettings(new InetSocketAddress("127.0.0.1", 0), null, false, certificate, key, Duration.ofSeconds(5),
        TlsSettings.Provider.AUTO);
  }

  private static InvalidConfigException refused(Path certificate, Path key) {
    return assertThrows(InvalidConfigException.class, () -> ServerCertificate.load(files(certificate, key)));
  }

  @Test
  void aChainAndAPkcs8KeyAreLoaded() {
    ServerCertificate c = ServerCertificate.load(files(pair[0], pair[1]));
    assertEquals("CN=unit", TestCertificates.subject(c.presented()));
    c.close();
  }

  @Test
  void aPkcs1RsaKeyIsReadAndASec1EcKeyIsRefusedWithTheConversion() throws Exception {
    ca.openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "rsa8.key", "-out", "rsa.pem", "-days", "1",
        "-subj", "/CN=rsa");
    ca.openssl("pkey", "-in", "rsa8.key", "-traditional", "-out", "rsa1.key");
    assertTrue(Files.readString(ca.dir.resolve("rsa1.key")).contains("BEGIN RSA PRIVATE KEY"));
    ServerCertificate.load(files(ca.dir.resolve("rsa.pem"), ca.dir.resolve("rsa1.key"))).close();

    ca.openssl("pkey", "-in", "unit.key", "-traditional", "-out", "unit-sec1.key");
    InvalidConfigException e = refused(pair[0], ca.dir.resolve("unit-sec1.key"));
    assertEquals("shoal.tls.private_key", e.key());
    assertTrue(e.getMessage().contains("openssl pkcs8 -topk8 -nocrypt"), e.getMessage());
  }

  @Test
  void aKeyOfAnotherCertificateOrAFileOfNoPemIsRefusedByKey() throws Exception {
    Path[] other = ca.issue("other");
    InvalidConfigException mismatch = refused(pair[0], other[1]);
    assertEquals("shoal.tls.private_key", mismatch.key());
    assertTrue(mismatch.getMessage().contains("not the key of the certificate"), mismatch.getMessage());
    Path junk = Files.writeString(ca.dir.resolve("junk.pem"), "not a certificate\n");
    assertEquals("shoal.tls.certificate", refused(junk, pair[1]).key());
  }
}

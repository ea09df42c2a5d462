package io.shoal.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throw-away CA and server certificates it signs, made with the openssl command in a temporary
 * directory, for 127.0.0.1 and localhost: what an operator's PEM files look like.
 */
public final class TestCertificates {
  public final Path dir;
  public final Path caCertificate;

  private TestCertificates(Path dir) {
    this.dir = dir;
    this.caCertificate = dir.resolve("ca.pem");
  }

  /** A new CA in a new temporary directory. */
  public static TestCertificates newCa() throws IOException, InterruptedException {
    TestCertificates ca = new TestCertificates(Files.createTempDirectory("shoal-tls"));
    ca.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=shoal test CA");
    return ca;
  }

  /**
   * A server certificate (its chain: the certificate, then the CA) and its PKCS#8 key signed by this
   * CA, written to {@code name}.pem and {@code name}.key in {@link #dir}.
   */
  public Path[] issue(String name) throws IOException, InterruptedException {
    return issue(name, 2);
  }

  /**
   * As {@link #issue(String)}, valid for {@code days} from now; -1 gives a certificate that expired
   * a day ago (openssl sets notAfter a day before notBefore, which is now).
   */
  public Path[] issue(String name, int days) throws IOException, InterruptedException {
    Files.writeString(dir.resolve(name + ".ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name);
    openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", name + ".leaf", "-days", Integer.toString(days), "-extfile", name + ".ext");
    Files.writeString(dir.resolve(name + ".pem"),
        Files.readString(dir.resolve(name + ".leaf")) + Files.readString(caCertificate));
    return new Path[] {dir.resolve(name + ".pem"), dir.resolve(name + ".key")};
  }

  /**
   * A self-signed certificate for 127.0.0.1 and localhost, signed by no CA, and its key:
   * {@code name}.pem and {@code name}.key in {@link #dir}.
   */
  public Path[] selfSigned(String name) throws IOException, InterruptedException {
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", name + ".key", "-out", name + ".pem", "-days", "2", "-subj", "/CN=" + name,
        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    return new Path[] {dir.resolve(name + ".pem"), dir.resolve(name + ".key")};
  }

  /** A server context presenting {@code pair} (certificate chain and key, as {@link #issue} writes them). */
  public SSLContext serverContext(Path[] pair) throws Exception {
    Path p12 = dir.resolve(pair[0].getFileName() + ".p12");
    openssl("pkcs12", "-export", "-in", pair[0].toString(), "-inkey", pair[1].toString(), "-out", p12.toString(),
        "-passout", "pass:test");
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(p12)) {
      keys.load(in, "test".toCharArray());
    }
    javax.net.ssl.KeyManagerFactory kmf =
        javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, "test".toCharArray());
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(kmf.getKeyManagers(), null, null);
    return context;
  }

  /** The base64 SHA-256 of the SubjectPublicKeyInfo of the first certificate in {@code pem}: its SPKI pin. */
  public static String spkiPin(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      X509Certificate c = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      return java.util.Base64.getEncoder().encodeToString(
          java.security.MessageDigest.getInstance("SHA-256").digest(c.getPublicKey().getEncoded()));
    }
  }

  /** Runs openssl in {@link #dir}; fails with its output when it fails. */
  public void openssl(String... args) throws IOException, InterruptedException {
    List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException("openssl " + String.join(" ", args) + " failed: " + new String(out, StandardCharsets.UTF_8));
    }
  }

  /** A client context that trusts this CA only. */
  public SSLContext clientContext() throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(caCertificate)) {
      trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }

  /** The subject common name of a certificate, e.g. "CN=dot-1". */
  public static String subject(X509Certificate c) {
    return c.getSubjectX500Principal().getName();
  }
}

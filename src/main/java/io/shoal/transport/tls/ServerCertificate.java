package io.shoal.transport.tls;

import io.shoal.config.InvalidConfigException;
import io.shoal.config.TlsSettings;
import io.shoal.metrics.ServerMetrics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The certificate the DoT and DoH listeners present, from {@code shoal.tls.certificate} and
 * {@code shoal.tls.private_key}. The files are checked every {@code reload_check}: a changed pair
 * that loads replaces the one in use for new connections (open ones keep theirs); one that does
 * not is logged once and the one in use stays, so a renewal written in two steps (one file, then
 * the other) or a broken file never takes the listeners down.
 *
 * <p>The TLS implementation is {@code shoal.tls.provider}: {@code auto} takes Conscrypt (BoringSSL
 * inside its jar) where its native library loads on this OS and CPU and the key is RSA or EC, the
 * JDK's otherwise (said in the log); {@code jdk} the JDK's. Shown in {@code shoal_tls_provider{provider}}.
 */
public final class ServerCertificate implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ServerCertificate.class);
  private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

  private final Path certificateFile;
  private final Path keyFile;
  private final AtomicReference<PemFiles.Loaded> current;
  /** The files as last looked at, loaded or not: a bad pair is reported once, not every check. */
  private volatile List<Object> lastSeen;
  private final ScheduledExecutorService checks;
  private final Duration every;
  private volatile ServerMetrics metrics;
  /** What each loaded pair is offered to (Conscrypt's provider, or the JDK's), and why. */
  private final TlsImplementation tls;

  private ServerCertificate(Path certificateFile, Path keyFile, PemFiles.Loaded loaded, List<Object> seen,
      Duration every, TlsImplementation tls) {
    this.every = every;
    this.tls = tls;
    this.certificateFile = certificateFile;
    this.keyFile = keyFile;
    this.current = new AtomicReference<>(loaded);
    this.lastSeen = seen;
    this.checks = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "shoal-tls-reload");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Reads the pair; {@link #startChecks} watches it for changes.
   *
   * @throws InvalidConfigException naming {@code shoal.tls.certificate} or {@code private_key}
   */
  public static ServerCertificate load(TlsSettings settings) {
    List<Object> seen = stamp(settings.certificate(), settings.privateKey());
    TlsImplementation tls = TlsImplementation.choose(settings.provider());
    PemFiles.Loaded loaded;
    try {
      loaded = PemFiles.load(settings.certificate(), settings.privateKey(), tls.conscrypt());
    } catch (PemFiles.BadFile e) {
      throw new InvalidConfigException(e.key ? "shoal.tls.private_key" : "shoal.tls.certificate", e.getMessage());
    }
    return new ServerCertificate(settings.certificate(), settings.privateKey(), loaded, seen, settings.reloadCheck(),
        tls);
  }

  /** The TLS implementation serving new connections: "conscrypt" or "jdk". */
  public String provider() {
    return current.get().provider();
  }

  private String providerNote(PemFiles.Loaded loaded) {
    if (tls.conscrypt() != null && !loaded.provider().equals("conscrypt")) {
      return "the JDK (Conscrypt serves RSA and EC keys only; this key is "
          + loaded.leaf().getPublicKey().getAlgorithm() + ")";
    }
    return tls.note();
  }

  /** Starts checking the files for a new certificate, reporting reloads and expiry to {@code metrics}. */
  public void startChecks(ServerMetrics metrics) {
    this.metrics = metrics;
    PemFiles.Loaded loaded = current.get();
    metrics.certificateExpiry(loaded.leaf().getNotAfter().toInstant().getEpochSecond());
    metrics.tlsProvider(loaded.provider());
    log.info("TLS certificate {}, valid until {}; checking {} and {} for changes every {} ms; TLS by {}",
        loaded.leaf().getSubjectX500Principal(), loaded.leaf().getNotAfter().toInstant(), certificateFile, keyFile,
        every.toMillis(), providerNote(loaded));
    checks.scheduleWithFixedDelay(this::check, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The certificate new connections get. */
  public X509Certificate presented() {
    return current.get().leaf();
  }

  /**
   * An engine for one server connection with the certificate in use now, TLS 1.2 or 1.3; when
   * {@code alpn} names protocols, the first of them the client offers is selected (a client that
   * offers none of them is served without ALPN, RFC 7301 allows it).
   */
  public SSLEngine serverEngine(String... alpn) {
    SSLEngine engine = current.get().context().createSSLEngine();
    engine.setUseClientMode(false);
    SSLParameters parameters = engine.getSSLParameters();
    parameters.setProtocols(PROTOCOLS);
    engine.setSSLParameters(parameters);
    if (alpn.length > 0) {
      // The server's preference, in order, among what the client offers; none in common: no ALPN.
      engine.setHandshakeApplicationProtocolSelector((e, offered) -> {
        for (String protocol : alpn) {
          if (offered.contains(protocol)) {
            return protocol;
          }
        }
        return "";
      });
    }
    return engine;
  }

  /** Looks at the files now, as the periodic check does (a configuration reload asks for it). */
  public void checkNow() {
    if (metrics != null) {
      check();
    }
  }

  private synchronized void check() {
    List<Object> now = stamp(certificateFile, keyFile);
    if (Objects.equals(now, lastSeen)) {
      return;
    }
    lastSeen = now;
    try {
      PemFiles.Loaded loaded = PemFiles.load(certificateFile, keyFile, tls.conscrypt());
      current.set(loaded);
      metrics.certificateReload("loaded");
      metrics.certificateExpiry(loaded.leaf().getNotAfter().toInstant().getEpochSecond());
      metrics.tlsProvider(loaded.provider());
      log.info("TLS certificate reloaded: {}, valid until {}; TLS by {}", loaded.leaf().getSubjectX500Principal(),
          loaded.leaf().getNotAfter().toInstant(), providerNote(loaded));
    } catch (PemFiles.BadFile e) {
      metrics.certificateReload("failed");
      log.warn("TLS certificate not reloaded, still presenting {}: {}",
          current.get().leaf().getSubjectX500Principal(), e.getMessage());
    } catch (RuntimeException e) {
      metrics.certificateReload("failed");
      log.warn("TLS certificate not reloaded: {}", e.toString());
    }
  }

  /** What tells a changed file: modification time, size and file identity (a renamed-in file), each file. */
  private static List<Object> stamp(Path... files) {
    Object[] parts = new Object[files.length * 3];
    for (int i = 0; i < files.length; i++) {
      try {
        BasicFileAttributes a = Files.readAttributes(files[i], BasicFileAttributes.class);
        parts[i * 3] = a.lastModifiedTime();
        parts[i * 3 + 1] = a.size();
        parts[i * 3 + 2] = a.fileKey();
      } catch (IOException e) {
        parts[i * 3] = "missing";
      }
    }
    return java.util.Arrays.asList(parts);
  }

  /** Stops checking the files. */
  @Override
  public void close() {
    checks.shutdownNow();
  }
}

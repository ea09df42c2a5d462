package io.shoal.server;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorSystem;
import io.shoal.config.ShoalConfig;
import io.shoal.config.TlsSettings;
import io.shoal.ingress.Ingress;
import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.https.DohTransport;
import io.shoal.transport.tls.DotTransport;
import io.shoal.transport.tls.ServerCertificate;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A node's DoT and DoH listeners, each off unless configured, and the certificate they share. */
final class EncryptedListeners {
  private static final Logger log = LoggerFactory.getLogger(EncryptedListeners.class);

  private final TlsSettings settings;
  private final ServerCertificate certificate;
  private volatile DotTransport dot;
  private volatile DohTransport doh;

  private EncryptedListeners(TlsSettings settings, ServerCertificate certificate) {
    this.settings = settings;
    this.certificate = certificate;
  }

  /**
   * Reads the certificate when a listener needs it, before any socket is bound.
   *
   * @throws io.shoal.config.InvalidConfigException naming the file's key when it cannot be used
   */
  static EncryptedListeners load(TlsSettings settings) {
    return new EncryptedListeners(settings, settings.needsCertificate() ? ServerCertificate.load(settings) : null);
  }

  /** Binds the configured listeners and has the node's shutdown unbind them with UDP and TCP. */
  void bind(ActorSystem<?> system, ShoalConfig config, Ingress ingress, ServerMetrics metrics) throws Exception {
    if (certificate != null) {
      certificate.startChecks(metrics);
    }
    if (settings.dot() != null) {
      dot = DotTransport.bind(system, settings.dot(), config.tcp(), certificate, ingress, metrics)
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      log.info("shoal answering DNS over TLS on {}", dot.localAddress());
    }
    if (settings.doh() != null) {
      doh = DohTransport.bind(system, settings.doh(), settings.dohPlaintext() ? null : certificate, config.tcp(),
          ingress, metrics)
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      log.info("shoal answering DNS over {} on {}{}", settings.dohPlaintext() ? "plain HTTP" : "HTTPS",
          doh.localAddress(), "/dns-query");
    }
    CoordinatedShutdown cs = CoordinatedShutdown.get(system);
    cs.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "stop-accepting-encrypted", this::unbind);
    cs.addTask(CoordinatedShutdown.PhaseServiceStop(), "stop-certificate-checks", () -> {
      close();
      return CompletableFuture.completedFuture(Done.getInstance());
    });
  }

  private CompletionStage<Done> unbind() {
    CompletionStage<Done> a = dot == null ? CompletableFuture.completedFuture(Done.getInstance()) : dot.unbind();
    CompletionStage<Done> b = doh == null ? CompletableFuture.completedFuture(Done.getInstance()) : doh.unbind();
    return a.thenCombine(b, (x, y) -> Done.getInstance());
  }

  /** Looks at the certificate files now (a reload): a changed, usable pair is taken for new connections. */
  void checkCertificate() {
    if (certificate != null) {
      certificate.checkNow();
    }
  }

  /** Stops checking the certificate files (listeners still bound are unbound by the shutdown). */
  void close() {
    if (certificate != null) {
      certificate.close();
    }
  }

  /** The DoT listener's address, or null when it is off. */
  InetSocketAddress dotAddress() {
    return dot == null ? null : dot.localAddress();
  }

  /** The DoH listener's address, or null when it is off. */
  InetSocketAddress dohAddress() {
    return doh == null ? null : doh.localAddress();
  }
}

package io.shoal.config;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The encrypted DNS listeners ({@code shoal.listen.tls}: DNS over TLS, {@code shoal.listen.https}:
 * DNS over HTTPS, each null when off) and the certificate they present ({@code shoal.tls}).
 *
 * @param dohPlaintext DoH over plain HTTP, for a node behind a proxy that terminates TLS
 * @param reloadCheck how often the certificate and key files are checked for a change
 */
public record TlsSettings(
    InetSocketAddress dot, InetSocketAddress doh, boolean dohPlaintext, Path certificate, Path privateKey,
    Duration reloadCheck) {

  /** Whether a listener needs the certificate: DoT, or DoH unless it is plain HTTP. */
  public boolean needsCertificate() {
    return dot != null || (doh != null && !dohPlaintext);
  }
}

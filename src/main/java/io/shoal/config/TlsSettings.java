package io.shoal.config;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The encrypted DNS listeners ({@code shoal.listen.tls}: DNS over TLS, {@code shoal.listen.https}:
 * DNS over HTTPS, each null when off) and the certificate they present ({@code shoal.tls}).
 *
 * @param dohPlaintext DoH over plain HTTP, for a node behind a proxy that terminates TLS
 * @param reloadCheck how often the certificate and key files are checked for a change
 * @param provider which TLS implementation the listeners use ({@code shoal.tls.provider})
 */
public record TlsSettings(
    InetSocketAddress dot, InetSocketAddress doh, boolean dohPlaintext, Path certificate, Path privateKey,
    Duration reloadCheck, Provider provider) {

  /** {@code tls.provider}. */
  public enum Provider {
    /** Conscrypt (BoringSSL inside its jar) where its native library loads, the JDK's otherwise. */
    AUTO,
    /** The JDK's own TLS (SunJSSE). */
    JDK;

    /** The value as written in the configuration. */
    public String configName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** Whether a listener needs the certificate: DoT, or DoH unless it is plain HTTP. */
  public boolean needsCertificate() {
    return dot != null || (doh != null && !dohPlaintext);
  }

  /**
   * DoT and DoH listeners ("" is off) and their certificate: the files must be readable here, so a
   * typo fails the start before any socket is bound; their contents are read when the node starts.
   */
  static TlsSettings from(Section listen, Section tls) {
    tls.allowOnly("certificate", "private_key", "reload_check", "provider");
    InetSocketAddress dot = listen.string("tls").isEmpty() ? null : listen.address("tls", 853);
    InetSocketAddress doh = listen.string("https").isEmpty() ? null : listen.address("https", 443);
    TlsSettings settings = new TlsSettings(dot, doh, listen.bool("https_plaintext"),
        Path.of(tls.string("certificate")), Path.of(tls.string("private_key")),
        tls.duration("reload_check", Duration.ofMillis(100), Duration.ofHours(1)),
        tls.choice("provider", Provider.class, Provider::configName));
    if (settings.needsCertificate()) {
      for (String name : new String[] {"certificate", "private_key"}) {
        String file = tls.string(name);
        if (file.isEmpty()) {
          throw new InvalidConfigException(tls.key(name),
              "must name a PEM file: " + (dot != null ? "shoal.listen.tls" : "shoal.listen.https") + " is set");
        }
        if (!Files.isReadable(Path.of(file))) {
          throw new InvalidConfigException(tls.key(name), "cannot read " + Path.of(file).toAbsolutePath());
        }
      }
    }
    return settings;
  }
}

package io.shoal.transport.tls;

import io.shoal.config.TlsSettings;
import java.security.Provider;

/**
 * The TLS implementation {@code shoal.tls.provider} chose on this host, for the listeners and the
 * DoT upstream connections alike: Conscrypt's provider (BoringSSL inside its jar) for {@code auto}
 * where its native library loads on this OS and CPU, or none (the JDK's own TLS) with the reason.
 *
 * @param conscrypt Conscrypt's provider, or null for the JDK's
 * @param fallback why {@code auto} got the JDK's here (the native library's load error), or null
 */
record TlsImplementation(Provider conscrypt, String fallback) {

  static TlsImplementation choose(TlsSettings.Provider setting) {
    if (setting != TlsSettings.Provider.AUTO) {
      return new TlsImplementation(null, null);
    }
    try {
      org.conscrypt.Conscrypt.checkAvailability();
      return new TlsImplementation(org.conscrypt.Conscrypt.newProvider(), null);
    } catch (Throwable t) {
      // UnsatisfiedLinkError and friends: no native library for this OS or CPU.
      return new TlsImplementation(null, t.getClass().getSimpleName() + ": " + t.getMessage());
    }
  }

  /** "conscrypt" or "jdk", as the shoal_tls_provider metrics label it. */
  String label() {
    return conscrypt == null ? "jdk" : "conscrypt";
  }

  /** For the log: "Conscrypt 2.5.2", or "the JDK" and why. */
  String note() {
    if (conscrypt != null) {
      org.conscrypt.Conscrypt.Version v = org.conscrypt.Conscrypt.version();
      return "Conscrypt " + v.major() + "." + v.minor() + "." + v.patch();
    }
    return "the JDK" + (fallback == null ? "" : " (Conscrypt did not load on this host: " + fallback + ")");
  }
}

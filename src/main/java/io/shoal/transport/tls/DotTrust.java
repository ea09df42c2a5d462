package io.shoal.transport.tls;

import io.shoal.config.DotServerSettings;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * How a DoT upstream's certificate is checked ({@link DotUpstream}): the trust (a CA file or the
 * JVM's store), the client engine with SNI and the hostname rules, the SPKI pins, and the reason
 * a refused handshake is counted and logged under.
 */
final class DotTrust {

  private DotTrust() {
  }

  /**
   * A client engine for {@code server}: TLS 1.3 or 1.2, the DoT ALPN, SNI for a name, and the
   * HTTPS hostname check of the certificate.
   */
  static SSLEngine engine(SSLContext context, DotServerSettings server) {
    SSLEngine e = context.createSSLEngine(server.name(), server.address().getPort());
    e.setUseClientMode(true);
    SSLParameters p = e.getSSLParameters();
    // The hostname check of HTTPS (RFC 2818/6125) is the one RFC 7858's strict profile asks for.
    p.setEndpointIdentificationAlgorithm("HTTPS");
    if (!isAddress(server.name())) {
      p.setServerNames(List.of(new SNIHostName(server.name())));
    }
    p.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
    p.setApplicationProtocols(new String[] {DotTransport.ALPN});
    e.setSSLParameters(p);
    return e;
  }

  private static boolean isAddress(String name) {
    return name.indexOf(':') >= 0 || name.matches("[0-9.]+");
  }

  /**
   * The trust of {@code s}: its CA file, or the JVM's trust store when it names none; the
   * connections are made by {@code conscrypt}'s engines, or the JDK's when it is null. The chain
   * and name are checked by the JDK's PKIX trust manager either way, so both refuse alike.
   */
  static SSLContext context(DotServerSettings s, java.security.Provider conscrypt)
      throws IOException, GeneralSecurityException {
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    if (s.caFile() == null) {
      tmf.init((KeyStore) null);
    } else {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      try (InputStream in = Files.newInputStream(s.caFile())) {
        int i = 0;
        for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
          trust.setCertificateEntry("ca-" + i++, c);
        }
      }
      tmf.init(trust);
    }
    if (conscrypt == null) {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    }
    SSLContext context = SSLContext.getInstance("TLS", conscrypt);
    TrustManager[] managers = tmf.getTrustManagers().clone();
    for (int i = 0; i < managers.length; i++) {
      if (managers[i] instanceof X509ExtendedTrustManager jdk) {
        managers[i] = new TlsThirteenAuthType(jdk);
      }
    }
    context.init(null, managers, null);
    return context;
  }

  /**
   * The JDK's PKIX trust manager behind Conscrypt's engines. In TLS 1.3 the cipher suite names no
   * key exchange, and Conscrypt says so with the auth type "GENERIC", which the JDK's end-entity
   * check does not know (it refuses every such handshake); the JDK's own TLS 1.3 says "UNKNOWN",
   * which it checks as a signing server's certificate. Everything else (chain, expiry, the HTTPS
   * name rules on the engine's SNI and peer host) is the JDK's check unchanged.
   */
  private static final class TlsThirteenAuthType extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager jdk;

    TlsThirteenAuthType(X509ExtendedTrustManager jdk) {
      this.jdk = jdk;
    }

    private static String authType(String conscrypts) {
      return "GENERIC".equals(conscrypts) ? "UNKNOWN" : conscrypts;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      jdk.checkServerTrusted(chain, authType(authType), engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      jdk.checkServerTrusted(chain, authType(authType), socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      jdk.checkServerTrusted(chain, authType(authType));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      jdk.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      jdk.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      jdk.checkClientTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return jdk.getAcceptedIssuers();
    }
  }

  /**
   * The SPKI pin check, after the handshake verified the chain and the name: the refusal when
   * {@code server} has pins and no certificate of the chain matches one; empty otherwise.
   */
  static Optional<Throwable> pinRefusal(DotServerSettings server, SSLSession session) {
    if (!server.spkiPins().isEmpty()) {
      try {
        MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
        boolean matched = false;
        for (Certificate cert : session.getPeerCertificates()) {
          matched |= server.spkiPins().contains(
              Base64.getEncoder().encodeToString(sha256.digest(cert.getPublicKey().getEncoded())));
        }
        if (!matched) {
          return Optional.of(new PinMismatch("no certificate of the chain matches tls_spki_pins"));
        }
      } catch (SSLPeerUnverifiedException | GeneralSecurityException e) {
        return Optional.of(new PinMismatch(e.toString()));
      }
    }
    return Optional.empty();
  }

  /** Why a handshake was refused, as a shoal_upstream_tls_failures_total reason; null for no TLS reason. */
  static String reason(Throwable failure) {
    String reason = null;
    for (Throwable t = failure; t != null; t = t.getCause()) {
      String m = String.valueOf(t.getMessage());
      if (t instanceof PinMismatch) {
        return "pin";
      } else if (t instanceof CertificateExpiredException || t instanceof CertificateNotYetValidException) {
        return "expired";
      } else if (m.contains("No subject alternative") || m.contains("No name matching")) {
        return "hostname";
      } else if (t instanceof CertPathValidatorException || m.contains("PKIX path")
          || m.contains("unable to find valid certification path")) {
        reason = "untrusted";
      } else if (t instanceof SSLException && reason == null) {
        reason = "handshake";
      }
    }
    return reason;
  }

  static String describe(String reason) {
    return switch (reason) {
      case "hostname" -> "its certificate does not carry the name";
      case "expired" -> "its certificate is expired or not yet valid";
      case "untrusted" -> "its certificate is not signed by a trusted CA (self-signed, or another CA)";
      case "pin" -> "its certificate matches no SPKI pin";
      default -> "the TLS handshake failed";
    };
  }

  static String innermost(Throwable t) {
    String m = t.toString();
    for (Throwable c = t; c != null; c = c.getCause()) {
      m = c.getMessage() == null ? c.toString() : c.getMessage();
    }
    return m;
  }

  /** The server's certificates matched no configured SPKI pin. */
  static final class PinMismatch extends SSLException {
    PinMismatch(String message) {
      super(message);
    }
  }
}

package io.shoal.config;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;

/**
 * An upstream server asked over DNS over TLS ({@code tls://ADDRESS:PORT#NAME} in a group's
 * servers): where it is, the name its certificate must carry (sent as SNI and checked against the
 * certificate), and what proves the certificate.
 *
 * @param caFile PEM certificates to trust instead of the JVM's trust store, or null for that store
 * @param spkiPins base64 SHA-256 digests of SubjectPublicKeyInfo (RFC 7858 section 4.2); when not
 *     empty a certificate of the server's chain must match one of them as well
 */
public record DotServerSettings(InetSocketAddress address, String name, Path caFile, List<String> spkiPins) {
  /** The port a {@code tls://} server without one is asked on (RFC 7858). */
  public static final int DEFAULT_PORT = 853;
}

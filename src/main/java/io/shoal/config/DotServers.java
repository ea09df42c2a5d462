package io.shoal.config;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The DoT servers of one upstream group: {@code tls://ADDRESS[:PORT]#NAME} entries of {@code
 * servers}, with the group's {@code tls_ca_file} and {@code tls_spki_pins}, checked before
 * anything starts.
 */
final class DotServers {
  static final String SCHEME = "tls://";
  private static final Pattern HOST_NAME =
      Pattern.compile("(?i)[a-z0-9_]([a-z0-9_-]{0,62})(\\.[a-z0-9_]([a-z0-9_-]{0,62}))*\\.?");
  private static final String EXAMPLE = "e.g. \"tls://192.0.2.53:853#dns.example\"";

  private final Section group;
  private final Path caFile;
  private final List<String> pins;

  DotServers(Section group) {
    this.group = group;
    this.caFile = group.has("tls_ca_file") ? caFile(group) : null;
    this.pins = group.has("tls_spki_pins") ? pins(group) : List.of();
  }

  static boolean isDot(String entry) {
    return entry.trim().regionMatches(true, 0, SCHEME, 0, SCHEME.length());
  }

  /** One {@code tls://} entry; the name after '#' is required, since it is what gets verified. */
  DotServerSettings entry(String entry) {
    String key = group.key("servers");
    String rest = entry.trim().substring(SCHEME.length());
    int hash = rest.indexOf('#');
    if (hash < 0 || hash == rest.length() - 1) {
      throw new InvalidConfigException(key, "'" + entry + "' names no server certificate name after '#'; "
          + "the name is sent as SNI and the certificate must carry it, " + EXAMPLE);
    }
    String name = rest.substring(hash + 1).trim();
    if (!HOST_NAME.matcher(name).matches() && !name.matches("[0-9.]+|[0-9a-fA-F:]+")) {
      throw new InvalidConfigException(key, "'" + name + "' in '" + entry + "' is not a host name, " + EXAMPLE);
    }
    InetSocketAddress address = Addresses.parse(rest.substring(0, hash), DotServerSettings.DEFAULT_PORT, key);
    if (address.getPort() == 0) {
      throw new InvalidConfigException(key, "port 0 is not a server port: " + entry);
    }
    return new DotServerSettings(address, name.endsWith(".") ? name.substring(0, name.length() - 1) : name,
        caFile, pins);
  }

  /** The TLS keys apply to tls:// servers only, and one address is asked one way only. */
  void check(List<InetSocketAddress> servers, Map<InetSocketAddress, DotServerSettings> dot) {
    if (dot.isEmpty()) {
      for (String k : new String[] {"tls_ca_file", "tls_spki_pins"}) {
        if (group.has(k)) {
          throw new InvalidConfigException(group.key(k), "applies to tls:// servers, and this group lists none");
        }
      }
      return;
    }
    Set<InetSocketAddress> seen = new HashSet<>();
    for (InetSocketAddress a : servers) {
      if (!seen.add(a) && dot.containsKey(a)) {
        throw new InvalidConfigException(group.key("servers"), a + " is listed twice; a server is asked over "
            + "TLS or over UDP/TCP, not both");
      }
    }
  }

  private static Path caFile(Section group) {
    String key = group.key("tls_ca_file");
    Path file = Path.of(group.string("tls_ca_file"));
    try (InputStream in = Files.newInputStream(file)) {
      if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
        throw new InvalidConfigException(key, file + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
      }
    } catch (IOException e) {
      throw new InvalidConfigException(key, "cannot read " + file + ": " + e.getMessage());
    } catch (CertificateException e) {
      throw new InvalidConfigException(key, file + " is not PEM certificates: " + e.getMessage());
    }
    return file;
  }

  /** Base64 SHA-256 digests, with or without a "sha256/" or "pin-sha256=" prefix. */
  private static List<String> pins(Section group) {
    List<String> out = new ArrayList<>();
    for (String raw : group.strings("tls_spki_pins")) {
      String p = raw.trim().replaceFirst("^(sha256/|pin-sha256=)", "").replace("\"", "");
      byte[] digest;
      try {
        digest = Base64.getDecoder().decode(p);
      } catch (IllegalArgumentException e) {
        digest = new byte[0];
      }
      if (digest.length != 32) {
        throw new InvalidConfigException(group.key("tls_spki_pins"), "'" + raw + "' is not a base64 SHA-256 "
            + "digest; make one with: openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der "
            + "| openssl dgst -sha256 -binary | base64");
      }
      out.add(Base64.getEncoder().encodeToString(digest));
    }
    if (out.isEmpty()) {
      throw new InvalidConfigException(group.key("tls_spki_pins"), "list at least one pin, or leave the key out");
    }
    return List.copyOf(out);
  }
}

package io.shoal.transport.tls;

import akka.pki.pem.DERPrivateKeyLoader;
import akka.pki.pem.PEMDecoder;
import akka.pki.pem.PEMLoadingException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A server certificate chain and its private key read from PEM files, as operators get them from
 * an ACME client or openssl, made into the SSLContext a listener presents.
 */
final class PemFiles {
  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*)-----END \\1-----");
  private static final String CONVERT = "convert it with: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8.pem";

  private PemFiles() {}

  /** Why a file cannot be used, naming which of the two it is. */
  static final class BadFile extends Exception {
    final boolean key;

    BadFile(boolean key, String message) {
      super(message);
      this.key = key;
    }
  }

  /**
   * The chain and key, checked to belong together, as a TLS 1.2/1.3 server context of
   * {@code provider} (null: the JDK's). Conscrypt takes RSA and EC keys only (an Ed25519 key would
   * fail every handshake), so a pair of another kind gets the JDK's context.
   */
  static Loaded load(Path certificateFile, Path keyFile, java.security.Provider provider) throws BadFile {
    List<X509Certificate> chain = certificates(certificateFile);
    PrivateKey key = privateKey(keyFile);
    checkPair(chain.get(0), key, keyFile);
    if (provider != null && !List.of("RSA", "EC").contains(key.getAlgorithm())) {
      provider = null;
    }
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("shoal", key, new char[0], chain.toArray(new Certificate[0]));
      KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, new char[0]);
      SSLContext context = provider == null ? SSLContext.getInstance("TLS") : SSLContext.getInstance("TLS", provider);
      context.init(keys.getKeyManagers(), null, null);
      return new Loaded(context, chain.get(0), provider == null ? "jdk" : "conscrypt");
    } catch (GeneralSecurityException | IOException e) {
      throw new BadFile(false, "cannot use the certificate and key: " + e.getMessage());
    }
  }

  /** A context, the certificate it presents, and whose TLS it is ("conscrypt" or "jdk"). */
  record Loaded(SSLContext context, X509Certificate leaf, String provider) {}

  private static List<X509Certificate> certificates(Path file) throws BadFile {
    String text = read(file, false);
    List<X509Certificate> chain = new ArrayList<>();
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      for (Certificate c : factory.generateCertificates(new ByteArrayInputStream(text.getBytes(StandardCharsets.ISO_8859_1)))) {
        chain.add((X509Certificate) c);
      }
    } catch (GeneralSecurityException e) {
      throw new BadFile(false, file + ": not a PEM certificate chain (" + e.getMessage() + ")");
    }
    if (chain.isEmpty()) {
      throw new BadFile(false, file + ": no \"BEGIN CERTIFICATE\" block");
    }
    return chain;
  }

  private static PrivateKey privateKey(Path file) throws BadFile {
    String text = read(file, true);
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      String label = m.group(1);
      switch (label) {
        case "PRIVATE KEY":
          return pkcs8(Base64.getMimeDecoder().decode(m.group(2)), file);
        case "RSA PRIVATE KEY":
          try {
            return DERPrivateKeyLoader.load(PEMDecoder.decode(m.group()));
          } catch (PEMLoadingException e) {
            throw new BadFile(true, file + ": cannot read the RSA key (" + e.getMessage() + ")");
          }
        case "EC PRIVATE KEY":
          throw new BadFile(true, file + ": an EC key in the SEC1 format is not read; " + CONVERT);
        case "ENCRYPTED PRIVATE KEY":
          throw new BadFile(true, file + ": the key is encrypted; shoal needs it unencrypted, " + CONVERT);
        default:
          // EC PARAMETERS and the like come before the key in some files
      }
    }
    throw new BadFile(true, file + ": no \"BEGIN PRIVATE KEY\" block");
  }

  private static PrivateKey pkcs8(byte[] der, Path file) throws BadFile {
    for (String algorithm : new String[] {"RSA", "EC", "EdDSA", "RSASSA-PSS"}) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // not this algorithm; try the next
      }
    }
    throw new BadFile(true, file + ": not an RSA, EC or EdDSA key in PKCS#8");
  }

  /** A key that does not sign for the certificate would fail every handshake: refuse it now. */
  private static void checkPair(X509Certificate leaf, PrivateKey key, Path keyFile) throws BadFile {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "EdDSA", "Ed25519", "Ed448" -> "EdDSA";
      default -> null;
    };
    if (algorithm == null) {
      return;
    }
    byte[] probe = "shoal".getBytes(StandardCharsets.US_ASCII);
    try {
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(leaf.getPublicKey());
      verifier.update(probe);
      if (verifier.verify(signature)) {
        return;
      }
    } catch (GeneralSecurityException e) {
      // a key of another type than the certificate's lands here too
    }
    throw new BadFile(true, keyFile + ": is not the key of the certificate " + leaf.getSubjectX500Principal());
  }

  /** A certificate chain or key is a few kilobytes; a file far larger is not one (and is not read whole). */
  static final int MAX_BYTES = 1 << 20;

  private static String read(Path file, boolean key) throws BadFile {
    if (Files.isDirectory(file)) {
      throw new BadFile(key, file + ": is a directory, not a file");
    }
    if (Files.exists(file) && !Files.isRegularFile(file)) {
      throw new BadFile(key, file + ": not a regular file (a device or a pipe is not read)");
    }
    try (java.io.InputStream in = Files.newInputStream(file)) {
      byte[] bytes = in.readNBytes(MAX_BYTES + 1);
      if (bytes.length > MAX_BYTES) {
        throw new BadFile(key, file + ": larger than " + MAX_BYTES + " bytes, not a PEM certificate or key");
      }
      return new String(bytes, StandardCharsets.ISO_8859_1);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new BadFile(key, file + ": cannot read: no such file");
    } catch (java.nio.file.AccessDeniedException e) {
      throw new BadFile(key, file + ": cannot read: permission denied");
    } catch (IOException e) {
      throw new BadFile(key, file + ": cannot read: " + e.getMessage());
    }
  }
}

package io.shoal.dnssec;

import io.shoal.config.DnssecSettings;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.Provider;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.DNSKEYRecord;
import org.xbill.DNS.DNSSEC.Algorithm;

/**
 * Which provider checks the signatures of each DNSSEC algorithm, and the conversion of a DNSKEY's
 * public key field into that provider's key (RFC 3110 for RSA, RFC 6605 for ECDSA, RFC 8080 for
 * EdDSA). {@code auto} takes Conscrypt (BoringSSL inside its jar) for RSA and ECDSA where its
 * native library loads, and the JDK's provider for the rest (Conscrypt has no Ed25519/Ed448) and
 * everywhere when it does not load (another OS or CPU); {@code jdk} takes the JDK's for all.
 * Algorithms not listed here (DSA, GOST) stay with dnsjava's own conversion and the JDK.
 */
public final class SignatureKeys {
  private static final Logger log = LoggerFactory.getLogger(SignatureKeys.class);

  /** The algorithms shoal checks with prepared keys, in the order the metric lists them. */
  static final int[] ALGORITHMS = {Algorithm.RSASHA1, Algorithm.RSA_NSEC3_SHA1, Algorithm.RSASHA256,
      Algorithm.RSASHA512, Algorithm.ECDSAP256SHA256, Algorithm.ECDSAP384SHA384, Algorithm.ED25519, Algorithm.ED448};

  // SubjectPublicKeyInfo prefixes (named curves), followed by the key bytes of RFC 6605 / 8080.
  private static final byte[] P256_SPKI = hex("3059301306072a8648ce3d020106082a8648ce3d03010703420004");
  private static final byte[] P384_SPKI = hex("3076301006072a8648ce3d020106052b8104002203620004");
  private static final byte[] ED25519_SPKI = hex("302a300506032b6570032100");
  private static final byte[] ED448_SPKI = hex("3043300506032b6571033a00");

  /** The native provider, or why it is not there; tried once per process. */
  private static final AtomicReference<Object> NATIVE = new AtomicReference<>();
  private static final AtomicReference<String> TOLD = new AtomicReference<>();

  /** One provider's engines for one algorithm: how to make keys and signatures. */
  record Backend(String name, String signatureAlgorithm, Provider provider) {
    KeyFactory keyFactory(String keyAlgorithm) throws GeneralSecurityException {
      return provider == null ? KeyFactory.getInstance(keyAlgorithm) : KeyFactory.getInstance(keyAlgorithm, provider);
    }

    Signature signature() throws GeneralSecurityException {
      return provider == null ? Signature.getInstance(signatureAlgorithm) : Signature.getInstance(signatureAlgorithm, provider);
    }

    // Each signature check finds its engine by its backend. A Provider is a Properties: its own
    // hashCode walks every entry of the provider (hundreds for Conscrypt) under the provider's
    // lock, so the record's generated hashCode cost a walk per check. A backend's provider is made
    // once per process: it is compared by identity.
    @Override
    public boolean equals(Object o) {
      return o instanceof Backend b && name.equals(b.name) && signatureAlgorithm.equals(b.signatureAlgorithm)
          && provider == b.provider;
    }

    @Override
    public int hashCode() {
      return 31 * (31 * name.hashCode() + signatureAlgorithm.hashCode()) + System.identityHashCode(provider);
    }
  }

  /** Results of shoal_dnssec_signature_checks_total. */
  static final String VALID = "valid";
  static final String INVALID = "invalid";
  /** Answered from the verdict memo, no cryptography. */
  static final String REMEMBERED = "remembered";

  /** Where checks are counted: algorithm number, provider, result. */
  public interface Checks {
    void counted(int algorithm, String provider, String result);
  }

  private final Map<Integer, Backend> backends = new LinkedHashMap<>();
  private final VerifiedSignatures memo;
  private volatile Checks checks = (alg, provider, result) -> {};

  private SignatureKeys(Map<Integer, Backend> backends, VerifiedSignatures memo) {
    this.backends.putAll(backends);
    this.memo = memo;
  }

  /**
   * The providers {@code choice} asks for, as far as this host has them; the first call in a
   * process says in the log which provider checks which algorithm (and why the native one is not
   * used, when it is not).
   */
  public static SignatureKeys choose(DnssecSettings.CryptoProvider choice) {
    return choose(choice, VerifiedSignatures.DEFAULT_CAPACITY);
  }

  /** As {@link #choose(DnssecSettings.CryptoProvider)}, with a verdict memo of {@code memoCapacity} (0: none, for benchmarks). */
  public static SignatureKeys choose(DnssecSettings.CryptoProvider choice, int memoCapacity) {
    PreparedKeySignature.register();
    Provider nativeProvider = choice == DnssecSettings.CryptoProvider.AUTO ? nativeProvider() : null;
    Map<Integer, Backend> backends = new LinkedHashMap<>();
    for (int alg : ALGORITHMS) {
      String sigAlg = jcaName(alg);
      Backend b = null;
      if (nativeProvider != null && nativeProvider.getService("Signature", sigAlg) != null) {
        b = new Backend("conscrypt", sigAlg, nativeProvider);
      } else {
        try {
          Signature.getInstance(sigAlg);
          b = new Backend("jdk", sigAlg, null);
        } catch (GeneralSecurityException e) {
          // Not on this JDK (Ed448 on a trimmed runtime): dnsjava reports the algorithm unsupported.
        }
      }
      if (b != null) {
        backends.put(alg, b);
      }
    }
    SignatureKeys keys = new SignatureKeys(backends, new VerifiedSignatures(memoCapacity));
    String summary = keys.describe(choice, nativeProvider);
    if (!summary.equals(TOLD.getAndSet(summary))) {
      log.info(summary);
    }
    return keys;
  }

  private String describe(DnssecSettings.CryptoProvider choice, Provider nativeProvider) {
    StringBuilder s = new StringBuilder("DNSSEC signatures checked by ");
    Map<String, java.util.List<String>> byProvider = new LinkedHashMap<>();
    backends.forEach((alg, b) -> byProvider.computeIfAbsent(b.name(), n -> new java.util.ArrayList<>()).add(algorithmLabel(alg)));
    String sep = "";
    for (Map.Entry<String, java.util.List<String>> e : byProvider.entrySet()) {
      s.append(sep).append(e.getKey()).append(" (").append(String.join(" ", e.getValue())).append(")");
      sep = ", ";
    }
    if (choice == DnssecSettings.CryptoProvider.JDK) {
      s.append("; dnssec.crypto_provider = jdk");
    } else if (nativeProvider == null) {
      s.append("; the native provider (Conscrypt) did not load on this host: ").append(NATIVE.get())
          .append(". Validation works, with more CPU per signature");
    }
    return s.toString();
  }

  /** Conscrypt's provider, or null when its native library does not load here (said once). */
  private static Provider nativeProvider() {
    Object n = NATIVE.get();
    if (n == null) {
      try {
        org.conscrypt.Conscrypt.checkAvailability();
        n = org.conscrypt.Conscrypt.newProvider();
      } catch (Throwable t) {
        // UnsatisfiedLinkError and friends: no native library for this OS or CPU.
        n = t.getClass().getSimpleName() + ": " + t.getMessage();
      }
      NATIVE.compareAndSet(null, n);
      n = NATIVE.get();
    }
    return n instanceof Provider p ? p : null;
  }

  /** The provider that checks {@code algorithm} ("conscrypt" or "jdk"), or null when none does. */
  public String providerOf(int algorithm) {
    Backend b = backends.get(algorithm);
    return b == null ? null : b.name();
  }

  /** Each algorithm this host checks with a prepared key, and the provider checking it. */
  public Map<Integer, String> providers() {
    Map<Integer, String> m = new LinkedHashMap<>();
    backends.forEach((alg, b) -> m.put(alg, b.name()));
    return m;
  }

  /** Counts each check in {@code c} from now on. */
  public void countIn(Checks c) {
    this.checks = c;
  }

  void counted(int algorithm, String result) {
    Backend b = backends.get(algorithm);
    checks.counted(algorithm, b == null ? "jdk" : b.name(), result);
  }

  VerifiedSignatures memo() {
    return memo;
  }

  /**
   * {@code r} with a public key that {@link #prepare} makes on first use and keeps; {@code r}
   * itself when its algorithm is not one of shoal's.
   */
  public DNSKEYRecord prepared(DNSKEYRecord r) {
    return r instanceof PreparedDnskey || !backends.containsKey(r.getAlgorithm()) ? r : new PreparedDnskey(r, this);
  }

  /** {@code r}'s public key for its algorithm's provider, or null (not ours, or malformed: dnsjava says why). */
  PreparedKey prepare(DNSKEYRecord r) {
    Backend b = backends.get(r.getAlgorithm());
    if (b == null) {
      return null;
    }
    byte[] key = r.getKey();
    try {
      return prepare(r.getAlgorithm(), key, b);
    } catch (GeneralSecurityException | RuntimeException e) {
      return null;
    }
  }

  private PreparedKey prepare(int alg, byte[] key, Backend b) throws GeneralSecurityException {
    switch (alg) {
      case Algorithm.RSASHA1, Algorithm.RSA_NSEC3_SHA1, Algorithm.RSASHA256, Algorithm.RSASHA512 -> {
        // RFC 3110 section 2: exponent length (1 octet, or 0 and 2 octets), exponent, modulus.
        int at = 0;
        int expLen = key[at++] & 0xFF;
        if (expLen == 0) {
          expLen = ((key[at] & 0xFF) << 8) | (key[at + 1] & 0xFF);
          at += 2;
        }
        if (expLen == 0 || at + expLen >= key.length) {
          return null;
        }
        BigInteger exponent = new BigInteger(1, Arrays.copyOfRange(key, at, at + expLen));
        BigInteger modulus = new BigInteger(1, Arrays.copyOfRange(key, at + expLen, key.length));
        PublicKey inner = b.keyFactory("RSA").generatePublic(new RSAPublicKeySpec(modulus, exponent));
        return new PreparedKey.Rsa(alg, inner, b, key, this, modulus, exponent);
      }
      case Algorithm.ECDSAP256SHA256 -> {
        return spki(alg, key, 64, P256_SPKI, "EC", b);
      }
      case Algorithm.ECDSAP384SHA384 -> {
        return spki(alg, key, 96, P384_SPKI, "EC", b);
      }
      case Algorithm.ED25519 -> {
        return spki(alg, key, 32, ED25519_SPKI, "Ed25519", b);
      }
      case Algorithm.ED448 -> {
        return spki(alg, key, 57, ED448_SPKI, "Ed448", b);
      }
      default -> {
        return null;
      }
    }
  }

  /** RFC 6605 section 4 (x and y, no point-format octet), RFC 8080 section 3: the raw key after a fixed prefix. */
  private PreparedKey spki(int alg, byte[] key, int length, byte[] prefix, String keyAlg, Backend b)
      throws GeneralSecurityException {
    if (key.length != length) {
      return null;
    }
    byte[] encoded = Arrays.copyOf(prefix, prefix.length + length);
    System.arraycopy(key, 0, encoded, prefix.length, length);
    PublicKey inner = b.keyFactory(keyAlg).generatePublic(new X509EncodedKeySpec(encoded));
    return inner instanceof java.security.interfaces.ECPublicKey ec ? new PreparedKey.Ec(alg, ec, b, key, this)
        : new PreparedKey(alg, inner, b, key, this);
  }

  /** dnsjava's JCA signature name for {@code alg} (DNSSEC.algString), which the engine registers under. */
  static String jcaName(int alg) {
    return switch (alg) {
      case Algorithm.RSASHA1, Algorithm.RSA_NSEC3_SHA1 -> "SHA1withRSA";
      case Algorithm.RSASHA256 -> "SHA256withRSA";
      case Algorithm.RSASHA512 -> "SHA512withRSA";
      case Algorithm.ECDSAP256SHA256 -> "SHA256withECDSA";
      case Algorithm.ECDSAP384SHA384 -> "SHA384withECDSA";
      case Algorithm.ED25519 -> "Ed25519";
      case Algorithm.ED448 -> "Ed448";
      default -> throw new IllegalArgumentException("algorithm " + alg);
    };
  }

  /** The algorithm label of shoal_dnssec_signature_provider: its mnemonic, lower case (rsasha256, ecdsap256sha256 ...). */
  public static String algorithmLabel(int alg) {
    return org.xbill.DNS.DNSSEC.Algorithm.string(alg).toLowerCase(Locale.ROOT).replace('-', '_');
  }

  private static byte[] hex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }
}

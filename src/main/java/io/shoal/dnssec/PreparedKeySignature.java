package io.shoal.dnssec;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.PublicKey;
import java.security.Security;
import java.security.Signature;
import java.security.SignatureException;
import java.security.SignatureSpi;
import java.util.HashMap;
import java.util.Map;

/**
 * The signature engine for {@link PreparedKey}s: dnsjava's verifier asks the JCA for
 * {@code Signature.getInstance("SHA256withECDSA")} and the like, and the JCA's provider selection
 * gives a prepared key to this engine, which checks the signature in the provider chosen for its
 * algorithm with a {@link Signature} kept per thread (none made per check), after asking the
 * verdict memo. It is registered once, first in the provider list, but claims only keys of class
 * {@link PreparedKey}: every other use of the JCA in the process (TLS, certificates) selects the
 * providers it selected before. Code that makes the JCA pick a provider before it has a key (by
 * asking {@code Signature.getProvider()} or setting parameters first) may still land here; such a
 * signature is passed whole to the engine the JCA picks for its key without this provider.
 */
public final class PreparedKeySignature extends SignatureSpi {
  /** The provider this engine is registered under. */
  static final String PROVIDER = "ShoalDnssec";

  private static final ThreadLocal<Map<SignatureKeys.Backend, Signature>> ENGINES = ThreadLocal.withInitial(HashMap::new);

  private final ByteArrayOutputStream data = new ByteArrayOutputStream(512);
  /** The JCA name this engine was made for ("SHA256withECDSA" ...). */
  private final String algorithm;
  private PreparedKey key;
  /** For a key that is not a {@link PreparedKey}: the engine the JCA picks for it, which does all the work. */
  private Signature foreign;
  private java.security.spec.AlgorithmParameterSpec params;

  public PreparedKeySignature(String algorithm) {
    this.algorithm = algorithm;
  }

  /** Puts the engine first in the JCA's provider list, once per process. */
  static synchronized void register() {
    if (Security.getProvider(PROVIDER) == null) {
      Security.insertProviderAt(new ShoalProvider(), 1);
    }
  }

  @Override
  protected void engineInitVerify(PublicKey publicKey) throws InvalidKeyException {
    data.reset();
    if (publicKey instanceof PreparedKey k) {
      key = k;
      foreign = null;
      return;
    }
    key = null;
    foreign = foreignEngine();
    foreign.initVerify(publicKey);
  }

  @Override
  protected void engineInitSign(PrivateKey privateKey) throws InvalidKeyException {
    key = null;
    foreign = foreignEngine();
    foreign.initSign(privateKey);
  }

  @Override
  protected void engineInitSign(PrivateKey privateKey, java.security.SecureRandom random) throws InvalidKeyException {
    key = null;
    foreign = foreignEngine();
    foreign.initSign(privateKey, random);
  }

  /** A JCA engine for a key that is not ours: this provider does not accept it, so the JCA picks another. */
  private Signature foreignEngine() throws InvalidKeyException {
    try {
      Signature s = Signature.getInstance(algorithm);
      if (params != null) {
        s.setParameter(params);
      }
      return s;
    } catch (GeneralSecurityException e) {
      throw new InvalidKeyException(e);
    }
  }

  @Override
  protected void engineUpdate(byte b) throws SignatureException {
    if (foreign != null) {
      foreign.update(b);
    } else {
      data.write(b);
    }
  }

  @Override
  protected void engineUpdate(byte[] b, int off, int len) throws SignatureException {
    if (foreign != null) {
      foreign.update(b, off, len);
    } else {
      data.write(b, off, len);
    }
  }

  @Override
  protected byte[] engineSign() throws SignatureException {
    if (foreign == null) {
      throw new SignatureException("not initialized for signing");
    }
    return foreign.sign();
  }

  @Override
  protected void engineSetParameter(java.security.spec.AlgorithmParameterSpec spec)
      throws java.security.InvalidAlgorithmParameterException {
    params = spec;
    if (foreign != null) {
      foreign.setParameter(spec);
    }
  }

  /**
   * Whether {@code sigBytes} signs the data: the RRSIG's signature field as dnsjava passes it (for
   * ECDSA already turned from r and s side by side, RFC 6605, into DER). A signature the provider
   * cannot parse is a false verdict, as one that does not verify.
   */
  @Override
  protected boolean engineVerify(byte[] sigBytes) throws SignatureException {
    if (foreign != null) {
      return foreign.verify(sigBytes);
    }
    PreparedKey k = key;
    if (k == null) {
      throw new SignatureException("not initialized for verification");
    }
    byte[] signed = data.toByteArray();
    data.reset();
    VerifiedSignatures memo = k.keys.memo();
    ByteBuffer memoKey = memo.enabled() ? VerifiedSignatures.key(k, sigBytes, signed, signed.length) : null;
    Boolean known = memoKey == null ? null : memo.get(memoKey);
    if (known != null) {
      k.keys.counted(k.algorithm, SignatureKeys.REMEMBERED);
      return known;
    }
    boolean verdict = check(k, sigBytes, signed);
    if (memoKey != null) {
      memo.put(memoKey, verdict);
    }
    k.keys.counted(k.algorithm, verdict ? SignatureKeys.VALID : SignatureKeys.INVALID);
    return verdict;
  }

  /** The provider's check of {@code sig} over {@code signed}, with this thread's engine for the key's provider. */
  static boolean check(PreparedKey k, byte[] sig, byte[] signed) throws SignatureException {
    try {
      Signature s = ENGINES.get().get(k.backend);
      if (s == null) {
        s = k.backend.signature();
        ENGINES.get().put(k.backend, s);
      }
      s.initVerify(k.inner);
      s.update(signed);
      return s.verify(sig);
    } catch (SignatureException e) {
      // An encoding the provider refuses (an RSA signature longer than the modulus ...): bogus.
      return false;
    } catch (GeneralSecurityException e) {
      throw new SignatureException(e);
    }
  }

  @Override
  protected java.security.AlgorithmParameters engineGetParameters() {
    return foreign != null ? foreign.getParameters() : null;
  }

  @Override
  @Deprecated
  protected void engineSetParameter(String param, Object value) {
    throw new UnsupportedOperationException();
  }

  @Override
  @Deprecated
  protected Object engineGetParameter(String param) {
    throw new UnsupportedOperationException();
  }

  /** The JCA provider of this engine: the DNSSEC signature algorithms, for {@link PreparedKey}s only. */
  static final class ShoalProvider extends Provider {
    private static final long serialVersionUID = 1L;

    ShoalProvider() {
      super(PROVIDER, "1.0", "shoal's DNSSEC signature checks with keys prepared once per DNSKEY");
      Map<String, String> attrs = Map.of("SupportedKeyClasses", PreparedKey.class.getName());
      for (String alg : new String[] {"SHA1withRSA", "SHA256withRSA", "SHA512withRSA", "SHA256withECDSA",
          "SHA384withECDSA", "Ed25519", "Ed448"}) {
        putService(new Service(this, "Signature", alg, PreparedKeySignature.class.getName(), null, attrs) {
          @Override
          public Object newInstance(Object constructorParameter) {
            return new PreparedKeySignature(alg);
          }
        });
      }
    }
  }
}

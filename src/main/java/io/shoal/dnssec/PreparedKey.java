package io.shoal.dnssec;

import java.math.BigInteger;
import java.security.PublicKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;

/**
 * A DNSKEY's public key converted once, for the provider that checks its algorithm's signatures
 * (see {@link SignatureKeys}). dnsjava's verifier hands it to {@code Signature.getInstance(alg)},
 * whose provider selection gives it to {@link PreparedKeySignature} (the only engine that accepts
 * this class), so the check runs in the chosen provider on a key made once per DNSKEY, not once
 * per signature. RSA and ECDSA keys are also {@link RSAPublicKey}s and {@link ECPublicKey}s, as
 * dnsjava expects (it reads their sizes for its key size and NSEC3 iteration limits, and hands an
 * EC key the signature already in DER).
 */
class PreparedKey implements PublicKey {
  private static final long serialVersionUID = 1L;

  /** The DNSSEC algorithm number (RFC 8624). */
  final int algorithm;
  /** The key as the checking provider made it. */
  final transient PublicKey inner;
  /** Which provider checks, and its JCA signature algorithm. */
  final transient SignatureKeys.Backend backend;
  /** The DNSKEY's public key field, as the verdict memo's key. */
  final byte[] dnsKey;
  /** Whose memo and counters the checks with this key use. */
  final transient SignatureKeys keys;

  PreparedKey(int algorithm, PublicKey inner, SignatureKeys.Backend backend, byte[] dnsKey, SignatureKeys keys) {
    this.algorithm = algorithm;
    this.inner = inner;
    this.backend = backend;
    this.dnsKey = dnsKey;
    this.keys = keys;
  }

  @Override
  public String getAlgorithm() {
    return inner.getAlgorithm();
  }

  @Override
  public String getFormat() {
    return inner.getFormat();
  }

  @Override
  public byte[] getEncoded() {
    return inner.getEncoded();
  }

  /**
   * An RSA key: dnsjava reads the modulus of RSA keys to apply its minimum key size, so this one
   * is an {@link RSAPublicKey} too.
   */
  static final class Rsa extends PreparedKey implements RSAPublicKey {
    private static final long serialVersionUID = 1L;
    private final BigInteger modulus;
    private final BigInteger exponent;

    Rsa(int algorithm, PublicKey inner, SignatureKeys.Backend backend, byte[] dnsKey, SignatureKeys keys,
        BigInteger modulus, BigInteger exponent) {
      super(algorithm, inner, backend, dnsKey, keys);
      this.modulus = modulus;
      this.exponent = exponent;
    }

    @Override
    public BigInteger getModulus() {
      return modulus;
    }

    @Override
    public BigInteger getPublicExponent() {
      return exponent;
    }
  }

  /** An ECDSA key (P-256 or P-384): the curve and point are the provider's key's. */
  static final class Ec extends PreparedKey implements ECPublicKey {
    private static final long serialVersionUID = 1L;
    private final ECParameterSpec params;
    private final ECPoint w;

    Ec(int algorithm, ECPublicKey inner, SignatureKeys.Backend backend, byte[] dnsKey, SignatureKeys keys) {
      super(algorithm, inner, backend, dnsKey, keys);
      this.params = inner.getParams();
      this.w = inner.getW();
    }

    @Override
    public ECParameterSpec getParams() {
      return params;
    }

    @Override
    public ECPoint getW() {
      return w;
    }
  }
}

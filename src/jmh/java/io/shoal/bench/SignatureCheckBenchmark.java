package io.shoal.bench;

import io.shoal.config.DnssecSettings;
import io.shoal.dnssec.SignatureKeys;
import java.math.BigInteger;
import java.net.InetAddress;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.RSAKeyGenParameterSpec;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.DNSKEYRecord;
import org.xbill.DNS.DNSSEC;
import org.xbill.DNS.DNSSEC.Algorithm;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.RRset;

/**
 * One DNSSEC signature check as the validator makes it: dnsjava's {@code DNSSEC.verify} of an A
 * RRset's RRSIG (canonical form, digest, signature) with the zone's DNSKEY, on one thread, so
 * the score is checks per second per core. {@code provider}: {@code dnsjava} is the path before
 * shoal prepared keys (dnsjava's own key conversion, a new JDK {@code Signature} per check);
 * {@code jdk} and {@code conscrypt} are shoal's prepared keys with that provider
 * ({@code dnssec.crypto_provider = jdk}, and {@code auto} where Conscrypt loads), the verdict memo
 * off so every call does the cryptography. {@code remembered} measures the memo's answer to a
 * signature already checked (what a second name under one wildcard costs).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 2, jvmArgsAppend = {"-Xmx512m"})
@State(Scope.Thread)
public class SignatureCheckBenchmark {
  private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");

  @Param({"rsasha256", "ecdsap256", "ecdsap384", "ed25519"})
  public String algorithm;

  @Param({"dnsjava", "jdk", "conscrypt"})
  public String provider;

  private RRset rrset;
  private RRSIGRecord sig;
  private DNSKEYRecord key;
  private DNSKEYRecord rememberingKey;

  @Setup
  public void setUp() throws Exception {
    int alg;
    KeyPair pair;
    switch (algorithm) {
      case "rsasha256" -> {
        alg = Algorithm.RSASHA256;
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(new RSAKeyGenParameterSpec(2048, BigInteger.valueOf(65537)));
        pair = g.generateKeyPair();
      }
      case "ecdsap256", "ecdsap384" -> {
        alg = algorithm.equals("ecdsap256") ? Algorithm.ECDSAP256SHA256 : Algorithm.ECDSAP384SHA384;
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec(algorithm.equals("ecdsap256") ? "secp256r1" : "secp384r1"));
        pair = g.generateKeyPair();
      }
      case "ed25519" -> {
        alg = Algorithm.ED25519;
        pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
      }
      default -> throw new IllegalArgumentException(algorithm);
    }
    Name zone = Name.fromConstantString("example.");
    DNSKEYRecord plain = new DNSKEYRecord(zone, DClass.IN, 300, 256, DNSKEYRecord.Protocol.DNSSEC, alg, pair.getPublic());
    rrset = new RRset();
    rrset.addRR(new ARecord(Name.fromConstantString("www.example."), DClass.IN, 300, InetAddress.getByName("192.0.2.1")));
    sig = DNSSEC.sign(rrset, plain, pair.getPrivate(), NOW.minusSeconds(3600), NOW.plusSeconds(3600));
    DnssecSettings.CryptoProvider choice = provider.equals("jdk") ? DnssecSettings.CryptoProvider.JDK
        : DnssecSettings.CryptoProvider.AUTO;
    SignatureKeys keys = SignatureKeys.choose(choice, 0);
    if (provider.equals("conscrypt") && !"conscrypt".equals(keys.providerOf(alg))) {
      throw new IllegalStateException("Conscrypt does not check " + algorithm + " here; the JDK's provider would");
    }
    // dnsjava's own record: a new key on each record from the wire, a new Signature per check.
    key = provider.equals("dnsjava") ? plain : keys.prepared(plain);
    rememberingKey = SignatureKeys.choose(choice).prepared(plain);
    DNSSEC.verify(rrset, sig, key, NOW);
    DNSSEC.verify(rrset, sig, rememberingKey, NOW);
  }

  /** A full check: digest and signature arithmetic. */
  @Benchmark
  public RRSIGRecord check() throws Exception {
    DNSSEC.verify(rrset, sig, key, NOW);
    return sig;
  }

  /** A check whose verdict the memo already holds: canonical form, one SHA-256, a map look-up. */
  @Benchmark
  public RRSIGRecord remembered() throws Exception {
    DNSSEC.verify(rrset, sig, rememberingKey, NOW);
    return sig;
  }
}

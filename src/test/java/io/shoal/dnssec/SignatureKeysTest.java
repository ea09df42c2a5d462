package io.shoal.dnssec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.DnssecSettings;
import java.net.InetAddress;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.RSAKeyGenParameterSpec;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.DNSKEYRecord;
import org.xbill.DNS.DNSSEC;
import org.xbill.DNS.DNSSEC.Algorithm;
import org.xbill.DNS.Name;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.RRset;

/**
 * Signature checks through dnsjava's DNSSEC.verify with keys prepared by {@link SignatureKeys}:
 * for each algorithm shoal prepares, under both provider choices, a good signature verifies, a
 * changed record or signature does not, the check reached shoal's engine with the provider the
 * choice names, and the same check a second time is answered from the verdict memo.
 */
class SignatureKeysTest {
  private static final Name ZONE = Name.fromConstantString("example.");
  private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");

  private static KeyPair keyPair(int alg) throws Exception {
    return switch (alg) {
      case Algorithm.RSASHA256, Algorithm.RSASHA1, Algorithm.RSASHA512 -> {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(new RSAKeyGenParameterSpec(2048, BigInteger.valueOf(65537)));
        yield g.generateKeyPair();
      }
      case Algorithm.ECDSAP256SHA256, Algorithm.ECDSAP384SHA384 -> {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec(alg == Algorithm.ECDSAP256SHA256 ? "secp256r1" : "secp384r1"));
        yield g.generateKeyPair();
      }
      case Algorithm.ED25519 -> KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
      case Algorithm.ED448 -> KeyPairGenerator.getInstance("Ed448").generateKeyPair();
      default -> throw new IllegalArgumentException();
    };
  }

  private static RRset rrset(String address) throws Exception {
    RRset set = new RRset();
    set.addRR(new ARecord(Name.fromConstantString("www.example."), DClass.IN, 300, InetAddress.getByName(address)));
    return set;
  }

  @Test
  void everyAlgorithmVerifiesThroughTheChosenProviderAndRemembersItsVerdicts() throws Exception {
    for (DnssecSettings.CryptoProvider choice : DnssecSettings.CryptoProvider.values()) {
      SignatureKeys keys = SignatureKeys.choose(choice);
      Map<String, AtomicInteger> counted = new ConcurrentHashMap<>();
      keys.countIn((alg, provider, result) ->
          counted.computeIfAbsent(alg + "/" + provider + "/" + result, k -> new AtomicInteger()).incrementAndGet());
      for (int alg : new int[] {Algorithm.RSASHA256, Algorithm.RSASHA512, Algorithm.ECDSAP256SHA256,
          Algorithm.ECDSAP384SHA384, Algorithm.ED25519, Algorithm.ED448}) {
        String provider = keys.providerOf(alg);
        boolean ecdsaOrRsa = alg != Algorithm.ED25519 && alg != Algorithm.ED448;
        assertEquals(choice == DnssecSettings.CryptoProvider.AUTO && ecdsaOrRsa ? "conscrypt" : "jdk", provider,
            choice + " " + alg);
        KeyPair pair = keyPair(alg);
        DNSKEYRecord plain = new DNSKEYRecord(ZONE, DClass.IN, 300, 257, DNSKEYRecord.Protocol.DNSSEC, alg, pair.getPublic());
        DNSKEYRecord key = keys.prepared(plain);
        assertInstanceOf(PreparedKey.class, key.getPublicKey(), "prepared for " + alg);
        if (alg == Algorithm.ECDSAP256SHA256 || alg == Algorithm.ECDSAP384SHA384) {
          // dnsjava reads the curve's size for its NSEC3 iteration limit.
          assertEquals(alg == Algorithm.ECDSAP256SHA256 ? 256 : 384, ((java.security.interfaces.ECPublicKey) key.getPublicKey())
              .getParams().getCurve().getField().getFieldSize());
        }
        RRset set = rrset("192.0.2.1");
        RRSIGRecord sig = DNSSEC.sign(set, plain, pair.getPrivate(), NOW.minusSeconds(3600), NOW.plusSeconds(3600));

        DNSSEC.verify(set, sig, key, NOW);
        DNSSEC.verify(set, sig, key, NOW);
        assertEquals(1, counted.get(alg + "/" + provider + "/valid").get(), "checked once, " + alg);
        assertEquals(1, counted.get(alg + "/" + provider + "/remembered").get(), "then remembered, " + alg);

        RRset changed = rrset("192.0.2.2");
        assertThrows(DNSSEC.SignatureVerificationException.class, () -> DNSSEC.verify(changed, sig, key, NOW),
            "a changed record, " + alg);
        byte[] flipped = sig.getSignature().clone();
        flipped[flipped.length / 2] ^= 1;
        RRSIGRecord bad = new RRSIGRecord(sig.getName(), sig.getDClass(), sig.getTTL(), sig.getTypeCovered(),
            sig.getAlgorithm(), sig.getOrigTTL(), sig.getExpire(), sig.getTimeSigned(), sig.getFootprint(),
            sig.getSigner(), flipped);
        assertThrows(DNSSEC.SignatureVerificationException.class, () -> DNSSEC.verify(set, bad, key, NOW),
            "a changed signature, " + alg);
        assertEquals(2, counted.get(alg + "/" + provider + "/invalid").get(), alg + " " + counted);
      }
    }
  }

  @Test
  void otherKeysKeepTheirProvidersEvenWhenTheProviderIsPickedBeforeTheKey() throws Exception {
    SignatureKeys.choose(DnssecSettings.CryptoProvider.AUTO);
    KeyPair pair = keyPair(Algorithm.ECDSAP256SHA256);
    byte[] data = "not DNS".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    // As TLS and certificate checks do: the key first. The engine registered first is passed over.
    java.security.Signature signer = java.security.Signature.getInstance("SHA256withECDSA");
    signer.initSign(pair.getPrivate());
    signer.update(data);
    byte[] sig = signer.sign();
    java.security.Signature verifier = java.security.Signature.getInstance("SHA256withECDSA");
    verifier.initVerify(pair.getPublic());
    assertEquals("SunEC", verifier.getProvider().getName());
    verifier.update(data);
    assertTrue(verifier.verify(sig));

    // Code that asks for the provider before giving a key lands on shoal's engine, which hands the
    // whole operation to the engine the JCA picks for that key.
    java.security.Signature early = java.security.Signature.getInstance("SHA256withECDSA");
    assertEquals(PreparedKeySignature.PROVIDER, early.getProvider().getName());
    early.initSign(pair.getPrivate());
    early.update(data);
    byte[] sig2 = early.sign();
    java.security.Signature earlyVerify = java.security.Signature.getInstance("SHA256withECDSA");
    earlyVerify.getProvider();
    earlyVerify.initVerify(pair.getPublic());
    earlyVerify.update(data);
    assertTrue(earlyVerify.verify(sig2));
    earlyVerify.initVerify(pair.getPublic());
    earlyVerify.update("changed".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    assertFalse(earlyVerify.verify(sig2));
  }

  @Test
  void withNoRememberedSignaturesEveryCheckIsMade() throws Exception {
    SignatureKeys keys = SignatureKeys.choose(DnssecSettings.CryptoProvider.AUTO, 0);
    AtomicInteger valid = new AtomicInteger();
    AtomicInteger remembered = new AtomicInteger();
    keys.countIn((alg, provider, result) -> (result.equals("valid") ? valid : remembered).incrementAndGet());
    KeyPair pair = keyPair(Algorithm.ECDSAP256SHA256);
    DNSKEYRecord plain = new DNSKEYRecord(ZONE, DClass.IN, 300, 257, DNSKEYRecord.Protocol.DNSSEC,
        Algorithm.ECDSAP256SHA256, pair.getPublic());
    RRset set = rrset("192.0.2.1");
    RRSIGRecord sig = DNSSEC.sign(set, plain, pair.getPrivate(), NOW.minusSeconds(3600), NOW.plusSeconds(3600));
    DNSKEYRecord key = keys.prepared(plain);
    DNSSEC.verify(set, sig, key, NOW);
    DNSSEC.verify(set, sig, key, NOW);
    assertEquals(2, valid.get());
    assertEquals(0, remembered.get());
  }

  @Test
  void theMemoStaysWithinItsBound() throws Exception {
    VerifiedSignatures memo = new VerifiedSignatures(100);
    List<java.nio.ByteBuffer> keys = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      java.nio.ByteBuffer k = java.nio.ByteBuffer.wrap(BigInteger.valueOf(i).toByteArray());
      keys.add(k);
      memo.put(k, true);
      assertTrue(memo.size() <= 100, "size " + memo.size());
    }
    assertEquals(Boolean.TRUE, memo.get(keys.get(999)));
    assertEquals(null, memo.get(keys.get(0)));
  }

  /** A provider that counts how often its (whole-map) hashCode runs. */
  private static final class CountingProvider extends java.security.Provider {
    private int hashes;

    CountingProvider() {
      super("Counting", "1", "counts hashCode calls");
      for (int i = 0; i < 200; i++) {
        put("Signature.Alg" + i, "none.Class" + i);
      }
    }

    @Override
    public synchronized int hashCode() {
      hashes++;
      return super.hashCode();
    }
  }

  @Test
  void findingABackendsEngineDoesNotWalkItsProvider() {
    CountingProvider p = new CountingProvider();
    SignatureKeys.Backend a = new SignatureKeys.Backend("native", "SHA256withECDSA", p);
    SignatureKeys.Backend same = new SignatureKeys.Backend("native", "SHA256withECDSA", p);
    java.util.Map<SignatureKeys.Backend, String> engines = new java.util.HashMap<>();
    engines.put(a, "engine");
    for (int i = 0; i < 1000; i++) {
      assertEquals("engine", engines.get(same));
    }
    assertEquals(0, p.hashes, "the provider's map was walked to hash a backend");
    assertEquals(a, same);
    assertEquals(a.hashCode(), same.hashCode());
    assertNotEquals(a, new SignatureKeys.Backend("native", "SHA256withECDSA", new CountingProvider()));
    assertNotEquals(a, new SignatureKeys.Backend("jdk", "SHA256withECDSA", p));
    assertEquals(new SignatureKeys.Backend("jdk", "SHA256withECDSA", null),
        new SignatureKeys.Backend("jdk", "SHA256withECDSA", null));
  }
}

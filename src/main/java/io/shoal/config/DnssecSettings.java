package io.shoal.config;

import io.shoal.files.FileLimits;
import io.shoal.files.ZoneFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * DNSSEC validation, {@code shoal.dnssec}.
 *
 * @param trustAnchors the DS and DNSKEY records validation starts from, read from {@code
 *     trust_anchors} (or the root anchor shipped in the jar)
 * @param negativeTrustAnchors names at and below which answers are passed on unvalidated (RFC 7646)
 * @param aggressiveNsec whether a miss covered by a cached secure NSEC/NSEC3 denial is answered
 *     from it without asking upstream (RFC 8198); only when {@code mode} is {@link Mode#ON}
 * @param cryptoProvider which provider checks signatures ({@code crypto_provider})
 * @param rememberedSignatures how many signature verdicts are kept per upstream group so the same
 *     check is not made twice ({@code remembered_signatures}; 0: none)
 * @param maxNsec3Iterations NSEC3 iterations above which a denial is insecure, whatever the key
 *     size ({@code max_nsec3_iterations}; RFC 9276)
 * @param maxSignatureChecks signature checks that may fail for one RRset before it is bogus
 *     ({@code max_signature_checks}; the KeyTrap bound, CVE-2023-50387)
 */
public record DnssecSettings(Mode mode, List<Record> trustAnchors, List<Name> negativeTrustAnchors, boolean aggressiveNsec,
    CryptoProvider cryptoProvider, int rememberedSignatures, int maxNsec3Iterations, int maxSignatureChecks) {

  /** RFC 9276's flat limit, as Unbound, BIND and Knot Resolver now apply it. */
  public static final int DEFAULT_MAX_NSEC3_ITERATIONS = 150;
  /** dnsjava's own KeyTrap bound (as Unbound's: a handful of failed checks per RRset). */
  public static final int DEFAULT_MAX_SIGNATURE_CHECKS = 8;

  /** {@code dnssec.crypto_provider}. */
  public enum CryptoProvider {
    /** The native provider (Conscrypt) where it loads and has the algorithm, the JDK's otherwise. */
    AUTO,
    /** The JDK's provider for every algorithm. */
    JDK;

    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** {@code dnssec.validation}. */
  public enum Mode {
    /** Validate; bogus answers become SERVFAIL. */
    ON,
    /** Pass answers on as the upstream gave them. */
    OFF,
    /** Validate and count, but answer bogus answers as if unvalidated (no AD) instead of SERVFAIL. */
    PERMISSIVE;

    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Validation off. */
  public static final DnssecSettings OFF = new DnssecSettings(Mode.OFF, List.of(), List.of(), false, CryptoProvider.AUTO, 0,
      DEFAULT_MAX_NSEC3_ITERATIONS, DEFAULT_MAX_SIGNATURE_CHECKS);

  /**
   * {@code shoal.dnssec}: the mode, and the trust anchors read and parsed here, so a missing or
   * unreadable anchor file stops the start naming the key and the file.
   */
  static DnssecSettings from(Section d, FileLimits limits) {
    d.allowOnly("validation", "trust_anchors", "negative_trust_anchors", "aggressive_nsec", "crypto_provider",
        "remembered_signatures", "max_nsec3_iterations", "max_signature_checks");
    DnssecSettings.Mode mode = d.choice("validation", DnssecSettings.Mode.class, DnssecSettings.Mode::configName);
    List<Name> ntas = new ArrayList<>();
    for (String nta : d.strings("negative_trust_anchors")) {
      ntas.add(Name.fromConstantString(ShoalConfig.canonicalSuffix(nta, d.key("negative_trust_anchors"))));
    }
    List<String> files = d.strings("trust_anchors");
    boolean aggressive = d.bool("aggressive_nsec");
    CryptoProvider crypto = d.choice("crypto_provider", CryptoProvider.class, CryptoProvider::configName);
    int remembered = (int) d.integer("remembered_signatures", 0, 10_000_000);
    int iterations = (int) d.integer("max_nsec3_iterations", 0, 65_535);
    int checks = (int) d.integer("max_signature_checks", 1, 1_000);
    if (mode == DnssecSettings.Mode.OFF) {
      return DnssecSettings.OFF;
    }
    String key = d.key("trust_anchors");
    List<Record> anchors = new ArrayList<>();
    if (files.isEmpty()) {
      byte[] shipped;
      try (InputStream in = DnssecSettings.class.getResourceAsStream("/dnssec/root.key")) {
        if (in == null) {
          throw new InvalidConfigException(key, "the root anchor in the jar is missing");
        }
        shipped = in.readAllBytes();
      } catch (IOException e) {
        throw new InvalidConfigException(key, "cannot read the root anchor in the jar: " + e);
      }
      anchors.addAll(anchorRecords(key, "the root anchor in the jar", null, shipped, limits));
    }
    for (String file : files) {
      anchors.addAll(anchorRecords(key, file, Path.of(file), null, limits));
    }
    // Denials are only synthesized from proofs validated as secure, and permissive mode serves
    // what failed validation too: it keeps no proofs.
    return new DnssecSettings(mode, List.copyOf(anchors), List.copyOf(ntas), aggressive && mode == Mode.ON,
        crypto, remembered, iterations, checks);
  }

  /**
   * The DS and DNSKEY records of one anchor file (zone-file syntax, read within {@code limits});
   * at least one. Errors name the file and line, never quote it.
   */
  private static List<Record> anchorRecords(String key, String source, Path file, byte[] text, FileLimits limits) {
    List<Record> records = new ArrayList<>();
    ZoneFile.Sink sink = (r, in, line) -> {
      if (r.getType() != Type.DS && r.getType() != Type.DNSKEY) {
        throw new InvalidConfigException(key, source + " line " + line + ": a " + Type.string(r.getType())
            + " record, not a DS or DNSKEY record (the two a trust anchor can be)");
      }
      records.add(r);
    };
    if (file != null) {
      ZoneFile.read(key, file, Name.root, 3600, limits, sink);
    } else {
      ZoneFile.read(key, source, text, Name.root, 3600, limits, sink);
    }
    if (records.isEmpty()) {
      throw new InvalidConfigException(key, source + " holds no DS or DNSKEY record");
    }
    return records;
  }
}

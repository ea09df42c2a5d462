package io.shoal.config;

import java.util.List;
import java.util.Locale;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;

/**
 * DNSSEC validation, {@code shoal.dnssec}.
 *
 * @param trustAnchors the DS and DNSKEY records validation starts from, read from {@code
 *     trust_anchors} (or the root anchor shipped in the jar)
 * @param negativeTrustAnchors names at and below which answers are passed on unvalidated (RFC 7646)
 */
public record DnssecSettings(Mode mode, List<Record> trustAnchors, List<Name> negativeTrustAnchors) {

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
  public static final DnssecSettings OFF = new DnssecSettings(Mode.OFF, List.of(), List.of());
}

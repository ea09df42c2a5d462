package io.shoal.dnssec;

import io.shoal.config.DnssecSettings;
import io.shoal.metrics.DnssecMetrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;
import org.xbill.DNS.dnssec.R;
import org.xbill.DNS.dnssec.ValidatingResolver;

/**
 * The validator's attack limits ({@code max_nsec3_iterations}, {@code max_signature_checks}) set
 * in dnsjava's validator, and which limit, if any, made its verdict. dnsjava's table of NSEC3
 * iterations per key size (RFC 5155: 150, 500, 2500) becomes one entry for every key size (RFC
 * 9276), and its KeyTrap bound on failed signature checks per RRset gets shoal's value.
 *
 * <p>dnsjava says why it gave a verdict only in its reason text (an insecure verdict has no
 * extended error): the validator is asked to add it to the answer (a TXT record of class 65280),
 * and {@link #reason} takes it out again before anything else sees the answer.
 */
final class ValidatorLimits {
  /** dnsjava's iteration table is keyed by key size in bits; key 0 covers every size. */
  private static final String NSEC3_ITERATIONS = "dnsjava.dnssec.nsec3.iterations.0";
  private static final String MAX_VALIDATE_RRSIGS = "dnsjava.dnssec.max_validate_rrsigs";
  /** The class of dnsjava's reason record. */
  private static final int REASON_CLASS = 65280;
  /** dnsjava's reason when every NSEC3 record was ignored (iterations above the limit, or an unknown hash). */
  private static final String NSEC3_IGNORED = R.get("failed.nsec3_ignored");
  /** dnsjava's reason when its bound on DS digests matched against keys of one tag stopped a check. */
  private static final String TOO_MANY_DS_MATCHES = R.get("dnskey.ds_max_match");

  private final int maxIterations;
  private final int maxChecks;

  private ValidatorLimits(int maxIterations, int maxChecks) {
    this.maxIterations = maxIterations;
    this.maxChecks = maxChecks;
  }

  /** Sets {@code settings}' limits in {@code validator} and asks it for its reasons. */
  static ValidatorLimits apply(DnssecSettings settings, ValidatingResolver validator) {
    Properties p = new Properties();
    p.setProperty(NSEC3_ITERATIONS, Integer.toString(settings.maxNsec3Iterations()));
    p.setProperty(MAX_VALIDATE_RRSIGS, Integer.toString(settings.maxSignatureChecks()));
    try {
      validator.init(p);
    } catch (IOException e) {
      throw new UncheckedIOException("dnsjava's validator refused its limits", e);
    }
    validator.setAddReasonToAdditional(true);
    return new ValidatorLimits(settings.maxNsec3Iterations(), settings.maxSignatureChecks());
  }

  /** dnsjava's reason record taken out of {@code validated}: its text, or null when there was none. */
  static String reason(Message validated) {
    StringBuilder text = null;
    for (Record r : List.copyOf(validated.getSection(Section.ADDITIONAL))) {
      if (r.getType() == Type.TXT && r.getDClass() == REASON_CLASS) {
        validated.removeRecord(r, Section.ADDITIONAL);
        text = text == null ? new StringBuilder() : text.append(' ');
        ((TXTRecord) r).getStrings().forEach(text::append);
      }
    }
    return text == null ? null : text.toString();
  }

  /**
   * Whether the verdict with {@code reason} on {@code raw}, the upstream's answer, came from NSEC3
   * records with more iterations than allowed (not from an unknown hash algorithm, the other
   * reason dnsjava ignores NSEC3 records for).
   */
  boolean nsec3IterationsTooHigh(String reason, Message raw) {
    if (reason == null || !reason.contains(NSEC3_IGNORED)) {
      return false;
    }
    for (Record r : raw.getSection(Section.AUTHORITY)) {
      if (r instanceof NSEC3Record n && r.getDClass() == DClass.IN && n.getIterations() > maxIterations) {
        return true;
      }
    }
    return false;
  }

  /**
   * The limit label of shoal_dnssec_limit_hits_total a bogus verdict with {@code reason} on {@code
   * raw}, the upstream's answer, hit, or null. dnsjava's reason for a bogus answer names the RRset,
   * not why its check failed; but an RRset carrying more RRSIGs than failed checks are allowed can
   * only have failed at the bound: each RRSIG is checked with one key, and the first that holds makes
   * the RRset secure. (A trap in a zone's DNSKEY set, fetched apart from the answer, is bounded the
   * same way but not counted.)
   */
  String bogusLimit(String reason, Message raw) {
    if (reason != null && reason.contains(TOO_MANY_DS_MATCHES)) {
      return DnssecMetrics.SIGNATURE_CHECKS;
    }
    Map<String, Integer> signatures = new HashMap<>();
    for (int section : new int[] {Section.ANSWER, Section.AUTHORITY}) {
      for (Record r : raw.getSection(section)) {
        if (r instanceof RRSIGRecord sig
            && signatures.merge(sig.getName() + "/" + sig.getTypeCovered(), 1, Integer::sum) > maxChecks) {
          return DnssecMetrics.SIGNATURE_CHECKS;
        }
      }
    }
    return null;
  }
}

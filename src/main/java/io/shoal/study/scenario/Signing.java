package io.shoal.study.scenario;

import com.typesafe.config.Config;
import java.util.List;

/**
 * A recipe whose zone knotd signs itself ({@code dnssec-signing: on}), with keys it generates at
 * start under a policy of {@code algorithm} and NSEC denial. The run writes the zone's DS records
 * ({@code keymgr ZONE ds}) to a trust-anchor file, which validating members are given; dnsperf
 * sets DO on every query, and a sample answer through each member is checked with
 * {@code kdig +dnssec} (AD set for a validating member).
 *
 * @param algorithm the DNSSEC algorithm as knotd's policy names it, e.g. ecdsap256sha256
 */
public record Signing(String algorithm) {
  /** The algorithms knotd signs with that both dnsjava and Unbound validate. */
  public static final List<String> ALGORITHMS = List.of(
      "rsasha256", "rsasha512", "ecdsap256sha256", "ecdsap384sha384", "ed25519");

  static Signing from(Config c) {
    ScenarioReader.allowOnly(c, "recipe.dnssec.", java.util.Set.of("algorithm"));
    String algorithm = c.hasPath("algorithm") ? c.getString("algorithm") : "ecdsap256sha256";
    if (!ALGORITHMS.contains(algorithm)) {
      throw new IllegalArgumentException("recipe.dnssec.algorithm: one of " + String.join(", ", ALGORITHMS)
          + "; is " + algorithm);
    }
    return new Signing(algorithm);
  }
}

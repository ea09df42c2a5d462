package io.shoal.config;

import java.nio.file.Path;

/**
 * The query logs ({@code shoal.log}): dnstap to a Unix socket or a file, and sampled JSON lines.
 *
 * @param dnstapSocket a Frame Streams collector's Unix socket, or null
 * @param dnstapFile a file to write dnstap to, or null (at most one of the two is set)
 * @param forwarder whether dnstap also carries FORWARDER_QUERY and FORWARDER_RESPONSE
 * @param queue events that may wait for the writer thread; beyond that they are dropped and counted
 * @param identity the dnstap identity field, or null to leave it out
 * @param version the dnstap version field, or null to leave it out
 * @param queries whether the JSON query log is on
 * @param sample the share of queries the JSON log takes, 0 to 1
 */
public record QueryLogSettings(
    Path dnstapSocket, Path dnstapFile, boolean forwarder, int queue, String identity, String version,
    boolean queries, double sample) {

  /** Whether dnstap is written at all. */
  public boolean dnstap() {
    return dnstapSocket != null || dnstapFile != null;
  }

  /** Whether either log is on; when not, a query pays one null check. */
  public boolean enabled() {
    return dnstap() || (queries && sample > 0);
  }
}

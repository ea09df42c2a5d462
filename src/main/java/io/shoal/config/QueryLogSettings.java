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

  /** {@code shoal.log}: dnstap (a socket or a file, at most one) and the sampled JSON query log. */
  static QueryLogSettings from(Section log) {
    log.allowOnly("dnstap", "queries");
    Section d = log.section("dnstap");
    d.allowOnly("socket", "file", "forwarder", "queue", "identity", "version");
    String socket = d.string("socket");
    String file = d.string("file");
    if (!socket.isEmpty() && !file.isEmpty()) {
      throw new InvalidConfigException(d.key("file"), "set socket or file, not both (socket is " + socket + ")");
    }
    // sun_path holds 108 bytes with its terminating NUL: a longer path cannot be connected to.
    if (socket.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 107) {
      throw new InvalidConfigException(d.key("socket"), "a Unix socket path has at most 107 bytes, got " + socket);
    }
    Section q = log.section("queries");
    q.allowOnly("enabled", "sample");
    String sampleText = q.string("sample");
    double sample;
    try {
      sample = Double.parseDouble(sampleText);
    } catch (NumberFormatException e) {
      sample = Double.NaN;
    }
    if (!(sample >= 0 && sample <= 1)) {
      throw new InvalidConfigException(q.key("sample"), "must be a share between 0 and 1 (e.g. 0.01), got '" + sampleText + "'");
    }
    return new QueryLogSettings(socket.isEmpty() ? null : Path.of(socket), file.isEmpty() ? null : Path.of(file),
        d.bool("forwarder"), (int) d.integer("queue", 16, 1 << 24), d.string("identity"), d.string("version"),
        q.bool("enabled"), sample);
  }
}

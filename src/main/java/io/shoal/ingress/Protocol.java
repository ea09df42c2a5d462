package io.shoal.ingress;

import io.shoal.wire.DnsQuery;

/** How a query arrived, which bounds the size of its reply. */
public enum Protocol {
  UDP("udp"),
  TCP("tcp"),
  /** DNS over TLS (RFC 7858). */
  DOT("dot"),
  /** DNS over HTTPS (RFC 8484). */
  DOH("doh");

  private final String label;

  Protocol(String label) {
    this.label = label;
  }

  /** The metric label. */
  public String label() {
    return label;
  }

  /** Whether queries arrive on a stream (one connection, many queries) rather than as datagrams. */
  public boolean stream() {
    return this != UDP;
  }

  /** Largest reply this protocol carries for {@code query} before it must be truncated. */
  public int sizeLimit(DnsQuery query) {
    return this == UDP ? query.udpLimit() : 65535;
  }
}

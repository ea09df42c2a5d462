package io.shoal.ingress;

import io.shoal.wire.DnsQuery;

/** How a query arrived, which bounds the size of its reply. */
public enum Protocol {
  UDP("udp"),
  TCP("tcp");

  private final String label;

  Protocol(String label) {
    this.label = label;
  }

  /** The metric label. */
  public String label() {
    return label;
  }

  /** Largest reply this protocol carries for {@code query} before it must be truncated. */
  public int sizeLimit(DnsQuery query) {
    return this == UDP ? query.udpLimit() : 65535;
  }
}

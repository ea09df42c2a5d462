package io.shoal.study.scenario;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * How dnsperf puts a member's queries to it ({@code dnsperf -m}): plain UDP or TCP on the member's
 * DNS port, or DNS over TLS or over HTTPS on a port of their own with the study's test certificate.
 */
public enum Transport {
  UDP("udp"),
  TCP("tcp"),
  DOT("dot"),
  DOH("doh");

  private final String configName;

  Transport(String configName) {
    this.configName = configName;
  }

  /** The transport as a scenario file writes it, which is also dnsperf's {@code -m} mode. */
  public String configName() {
    return configName;
  }

  /** True for DoT and DoH: the server needs a certificate and listens on a second port. */
  public boolean encrypted() {
    return this == DOT || this == DOH;
  }

  /** Looks a transport up by its scenario name; the error lists the allowed ones. */
  public static Transport named(String name) {
    for (Transport t : values()) {
      if (t.configName.equals(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException("unknown transport '" + name + "'; allowed: "
        + Arrays.stream(values()).map(Transport::configName).collect(Collectors.joining(", ")));
  }
}

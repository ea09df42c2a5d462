package io.shoal.study.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Version lines as the tools print them (dnsperf -h, knotd --version, pdns_recursor --version). */
class ToolVersionsTest {

  @Test
  void picksTheLineThatNamesTheVersion() {
    assertEquals("Version 2.10.0", ToolVersions.versionLine(
        "Usage: dnsperf [-f family] [-m mode]\n  -l run for at most this many seconds\nDNS Performance Testing Tool\n"
            + "Version 2.10.0\n"));
    assertEquals("knotd (Knot DNS), version 3.2.6", ToolVersions.versionLine("knotd (Knot DNS), version 3.2.6\n"));
    assertEquals("PowerDNS Recursor 4.8.8 (C) 2001-2022 PowerDNS.COM BV", ToolVersions.versionLine(
        "Nov 29 19:27:56 PowerDNS Recursor 4.8.8 (C) 2001-2022 PowerDNS.COM BV\n"
            + "Nov 29 19:27:56 Configured with: \" '--build=x86_64-linux-gnu' '--with-lua=lua5.3'\"\n"));
    assertEquals("unknown", ToolVersions.versionLine("no digits here\n"));
  }
}

package io.shoal.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.InvalidConfigException;
import io.shoal.wire.DnsQuery;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

class LocalTableTest {
  @TempDir
  Path dir;

  private static LocalTable table(List<String> records, List<String> zones) {
    return LocalTable.of(LocalSettings.records(records), LocalSettings.zones(zones));
  }

  private static DnsQuery query(String name, int type) throws Exception {
    Message m = Message.newQuery(Record.newRecord(Name.fromString(name), type, 1));
    m.getHeader().setID(4242);
    return DnsQuery.parse(m.toWire());
  }

  private static Message ask(LocalTable t, String name, int type) throws Exception {
    byte[] r = t.answer(query(name, type), 512);
    return r == null ? null : new Message(r);
  }

  private static final List<String> HOME = List.of(
      "nas.home.arpa. A 192.168.1.10",
      "nas.home.arpa. A 192.168.1.11",
      "nas.home.arpa. 600 IN TXT \"backup box\"",
      "www.home.arpa. CNAME nas.home.arpa.",
      "home.arpa. MX 10 nas.home.arpa.",
      "_sip._tcp.home.arpa. SRV 0 5 5060 nas.home.arpa.",
      "10.1.168.192.in-addr.arpa. PTR nas.home.arpa.");

  @Test
  void answersEveryTypeOfLocalDataAuthoritativelyInTheClientsLetterCase() throws Exception {
    LocalTable t = table(HOME, List.of());
    Message a = ask(t, "NAS.Home.arpa.", Type.A);
    assertEquals(Rcode.NOERROR, a.getRcode());
    assertTrue(a.getHeader().getFlag(Flags.AA));
    assertTrue(a.getHeader().getFlag(Flags.QR));
    assertEquals(4242, a.getHeader().getID());
    assertEquals(2, a.getSection(Section.ANSWER).size());
    assertEquals("NAS.Home.arpa.", a.getSection(Section.ANSWER).get(0).getName().toString());
    assertEquals(3600, a.getSection(Section.ANSWER).get(0).getTTL());
    assertEquals(600, ask(t, "nas.home.arpa.", Type.TXT).getSection(Section.ANSWER).get(0).getTTL());
    assertEquals(Type.MX, ask(t, "home.arpa.", Type.MX).getSection(Section.ANSWER).get(0).getType());
    assertEquals(Type.SRV, ask(t, "_sip._tcp.home.arpa.", Type.SRV).getSection(Section.ANSWER).get(0).getType());
    assertEquals("nas.home.arpa.",
        ask(t, "10.1.168.192.in-addr.arpa.", Type.PTR).getSection(Section.ANSWER).get(0).rdataToString());
    assertEquals(3, ask(t, "nas.home.arpa.", Type.ANY).getSection(Section.ANSWER).size());
  }

  @Test
  void aCnameIsFollowedInsideLocalData() throws Exception {
    Message m = ask(table(HOME, List.of()), "www.home.arpa.", Type.A);
    List<Record> answer = m.getSection(Section.ANSWER);
    assertEquals(3, answer.size());
    assertEquals(Type.CNAME, answer.get(0).getType());
    assertEquals("nas.home.arpa.", answer.get(1).getName().toString());
    assertEquals(Type.CNAME, ask(table(HOME, List.of()), "www.home.arpa.", Type.CNAME)
        .getSection(Section.ANSWER).get(0).getType());
  }

  @Test
  void aKnownNameWithoutTheTypeIsNodataWithAnSoaAndUnknownNamesAreNotLocal() throws Exception {
    LocalTable t = table(HOME, List.of());
    Message m = ask(t, "nas.home.arpa.", Type.AAAA);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertEquals(0, m.getSection(Section.ANSWER).size());
    assertEquals(Type.SOA, m.getSection(Section.AUTHORITY).get(0).getType());
    assertTrue(m.getHeader().getFlag(Flags.AA));
    assertNull(ask(t, "other.home.arpa.", Type.A), "not local data: resolved as usual");
    assertNull(ask(t, "_tcp.home.arpa.", Type.A), "an empty non-terminal outside a zone is resolved as usual");
  }

  @Test
  void staticZonesAnswerNxdomainForNamesWithoutData() throws Exception {
    LocalTable t = table(HOME, List.of("home.arpa. static"));
    Message nx = ask(t, "printer.home.arpa.", Type.A);
    assertEquals(Rcode.NXDOMAIN, nx.getRcode());
    assertEquals("home.arpa.", nx.getSection(Section.AUTHORITY).get(0).getName().toString());
    assertEquals(Rcode.NOERROR, ask(t, "_tcp.home.arpa.", Type.A).getRcode(), "empty non-terminal: NODATA");
    assertEquals(2, ask(t, "nas.home.arpa.", Type.A).getSection(Section.ANSWER).size());
  }

  @Test
  void redirectRefuseAlwaysNxdomainAndTransparentZones() throws Exception {
    LocalTable t = table(List.of("ads.test. A 127.0.0.1", "ok.refused.test. A 192.0.2.1", "x.gone.test. A 192.0.2.2",
        "known.open.test. A 192.0.2.3"),
        List.of("ads.test. redirect", "refused.test. refuse", "gone.test. always_nxdomain", "open.test. transparent"));
    Message r = ask(t, "deep.tracker.ads.test.", Type.A);
    assertEquals("127.0.0.1", r.getSection(Section.ANSWER).get(0).rdataToString());
    assertEquals("deep.tracker.ads.test.", r.getSection(Section.ANSWER).get(0).getName().toString());
    assertEquals(Rcode.REFUSED, ask(t, "other.refused.test.", Type.A).getRcode());
    assertEquals(1, ask(t, "ok.refused.test.", Type.A).getSection(Section.ANSWER).size());
    assertEquals(Rcode.NXDOMAIN, ask(t, "x.gone.test.", Type.A).getRcode());
    assertNull(ask(t, "unknown.open.test.", Type.A));
    assertEquals(1, ask(t, "known.open.test.", Type.A).getSection(Section.ANSWER).size());
    assertEquals(Rcode.NOERROR, ask(t, "known.open.test.", Type.AAAA).getRcode());
    assertNull(ask(t, "elsewhere.example.", Type.A));
  }

  @Test
  void aReplyTooLargeForUdpIsTruncated() throws Exception {
    List<String> many = new java.util.ArrayList<>();
    for (int i = 0; i < 40; i++) {
      many.add("big.test. TXT \"" + "x".repeat(20) + i + "\"");
    }
    LocalTable t = table(many, List.of());
    Message m = new Message(t.answer(query("big.test.", Type.TXT), 512));
    assertTrue(m.getHeader().getFlag(Flags.TC));
    assertEquals(40, new Message(t.answer(query("big.test.", Type.TXT), 65535)).getSection(Section.ANSWER).size());
  }

  @Test
  void anEdnsQueryGetsAnOpt() throws Exception {
    Message q = Message.newQuery(Record.newRecord(Name.fromString("nas.home.arpa."), Type.A, 1));
    q.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
    Message m = new Message(table(HOME, List.of()).answer(DnsQuery.parse(q.toWire()), 1232));
    assertNotNull(m.getOPT());
  }

  @Test
  void hostsFilesGiveAddressesAndPointers() throws Exception {
    Path hosts = Files.writeString(dir.resolve("hosts"), String.join("\n",
        "# a comment", "192.168.1.20  printer printer.home.arpa  # trailing", "", "fd00::20 printer",
        "0.0.0.0 blocked.example"));
    LocalTable t = LocalTable.load(new LocalSettings(List.of(), List.of(hosts), List.of()));
    assertEquals("192.168.1.20", ask(t, "printer.", Type.A).getSection(Section.ANSWER).get(0).rdataToString());
    assertEquals(1, ask(t, "printer.home.arpa.", Type.A).getSection(Section.ANSWER).size());
    assertEquals("fd00:0:0:0:0:0:0:20",
        ask(t, "printer.", Type.AAAA).getSection(Section.ANSWER).get(0).rdataToString().replace("::", ":0:0:0:0:0:0:"));
    assertEquals("printer.",
        ask(t, "20.1.168.192.in-addr.arpa.", Type.PTR).getSection(Section.ANSWER).get(0).rdataToString());
    assertNull(ask(t, "0.0.0.0.in-addr.arpa.", Type.PTR), "no pointer for the unspecified address");
  }

  @Test
  void badLinesAndMissingFilesNameTheKeyTheFileAndTheLine() throws Exception {
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
        () -> LocalSettings.records(List.of("ok.test. A 192.0.2.1", "bad.test. A not-an-address")));
    assertTrue(bad.getMessage().startsWith("line 2"), bad.getMessage());
    assertThrows(IllegalArgumentException.class, () -> LocalSettings.records(List.of("x.test. NS ns.test.")));
    assertThrows(IllegalArgumentException.class, () -> LocalSettings.zones(List.of("home.arpa. statik")));

    Path hosts = Files.writeString(dir.resolve("hosts"), "192.168.1.1 ok\nnot-an-address name\n");
    InvalidConfigException e = assertThrows(InvalidConfigException.class,
        () -> LocalTable.load(new LocalSettings(List.of(), List.of(hosts), List.of())));
    assertTrue(e.getMessage().contains("shoal.local.hosts_files") && e.getMessage().contains(hosts.toString())
        && e.getMessage().contains("line 2"), e.getMessage());
    InvalidConfigException missing = assertThrows(InvalidConfigException.class,
        () -> LocalTable.load(new LocalSettings(List.of(), List.of(dir.resolve("nope")), List.of())));
    assertTrue(missing.getMessage().contains("nope"), missing.getMessage());
  }

  @Test
  void aChangedHostsFileReplacesTheTable() throws Exception {
    Path hosts = Files.writeString(dir.resolve("hosts"), "192.168.1.1 box\n");
    LocalData local = LocalData.load(new LocalSettings(List.of(), List.of(hosts), List.of()));
    assertEquals("192.168.1.1", new Message(local.answer(query("box.", Type.A), 512))
        .getSection(Section.ANSWER).get(0).rdataToString());
    assertEquals(false, local.pollFiles());
    Files.writeString(hosts, "192.168.1.2 box\n192.168.1.3 newbox\n");
    Files.setLastModifiedTime(hosts, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
    assertTrue(local.pollFiles());
    assertEquals("192.168.1.2", new Message(local.answer(query("box.", Type.A), 512))
        .getSection(Section.ANSWER).get(0).rdataToString());
    Files.writeString(hosts, "garbage\n");
    Files.setLastModifiedTime(hosts, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 9000));
    assertTrue(local.pollFiles());
    assertNotNull(local.answer(query("newbox.", Type.A), 512), "a bad file keeps the previous table");
  }
}

package io.shoal.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.InvalidConfigException;
import io.shoal.metrics.PolicyMetrics;
import io.shoal.wire.DnsQuery;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

class ResponsePolicyTest {
  @TempDir
  Path dir;

  private static final String RPZ = String.join("\n",
      "$TTL 300",
      "$ORIGIN rpz.test.",
      "@ SOA localhost. admin.localhost. 1 3600 600 86400 60",
      "  NS localhost.",
      "nx.example CNAME .",
      "nodata.example CNAME *.",
      "*.wild.example CNAME .",
      "ok.wild.example CNAME rpz-passthru.",
      "silent.example CNAME rpz-drop.",
      "forged.example A 192.0.2.66",
      "forged.example TXT \"policy\"",
      "moved.example CNAME walled.garden.test.",
      "32.1.2.0.192.rpz-ip CNAME .",
      "allowed.ads.test CNAME rpz-passthru.",
      "");

  private static DnsQuery query(String name, int type) throws Exception {
    Message m = Message.newQuery(Record.newRecord(Name.fromString(name), type, 1));
    m.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
    return DnsQuery.parse(m.toWire());
  }

  private static Message ask(ResponsePolicy p, String name, int type) throws Exception {
    byte[] r = p.answer(query(name, type), 1232);
    return r == null ? null : new Message(r);
  }

  private static int ede(Message m) {
    for (EDNSOption o : m.getOPT().getOptions()) {
      if (o instanceof ExtendedErrorCodeOption e) {
        return e.getErrorCode();
      }
    }
    return -1;
  }

  private ResponsePolicy policy(List<String> lists) throws Exception {
    Path rpz = Files.writeString(dir.resolve("block.rpz"), RPZ);
    return ResponsePolicy.load(
        new PolicySettings(List.of(rpz), PolicySettings.domainLists(lists)), new PolicyMetrics());
  }

  @Test
  void rpzActions() throws Exception {
    ResponsePolicy p = policy(List.of());
    Message nx = ask(p, "nx.example.", Type.A);
    assertEquals(Rcode.NXDOMAIN, nx.getRcode());
    assertEquals(15, ede(nx));
    Message nodata = ask(p, "nodata.example.", Type.A);
    assertEquals(Rcode.NOERROR, nodata.getRcode());
    assertEquals(0, nodata.getSection(Section.ANSWER).size());
    assertSame(ResponsePolicy.DROP, p.answer(query("silent.example.", Type.A), 1232));
    Message forged = ask(p, "Forged.Example.", Type.A);
    assertEquals("192.0.2.66", forged.getSection(Section.ANSWER).get(0).rdataToString());
    assertEquals("Forged.Example.", forged.getSection(Section.ANSWER).get(0).getName().toString());
    assertEquals(4, ede(forged));
    assertEquals(Type.TXT, ask(p, "forged.example.", Type.TXT).getSection(Section.ANSWER).get(0).getType());
    assertEquals(0, ask(p, "forged.example.", Type.AAAA).getSection(Section.ANSWER).size());
    Message moved = ask(p, "moved.example.", Type.A);
    assertEquals(Type.CNAME, moved.getSection(Section.ANSWER).get(0).getType());
    assertEquals("walled.garden.test.", moved.getSection(Section.ANSWER).get(0).rdataToString());
    assertNull(ask(p, "below.nx.example.", Type.A), "an exact trigger matches only its name");
    assertNull(ask(p, "unlisted.example.", Type.A));
  }

  @Test
  void wildcardTriggersMatchNamesBelowAndPassthruWins() throws Exception {
    ResponsePolicy p = policy(List.of());
    assertEquals(Rcode.NXDOMAIN, ask(p, "a.b.wild.example.", Type.A).getRcode());
    assertNull(ask(p, "wild.example.", Type.A), "*.name does not match the name itself");
    assertNull(ask(p, "ok.wild.example.", Type.A), "the more specific passthru wins");
  }

  @Test
  void domainListsMatchTheNameAndEverythingBelowIt() throws Exception {
    Path list = Files.writeString(dir.resolve("ads.txt"), String.join("\n",
        "# ads", "ads.test", "tracker.example.org.  # trailing comment", "  *.metrics.test", "", "\r",
        "0.0.0.0 hosts-style.test other.hosts-style.test", "127.0.0.1 localhost", "Mixed.Case.Test"));
    Path refuse = Files.writeString(dir.resolve("refuse.txt"), "refused.test\nads.test\n");
    ResponsePolicy p = policy(List.of(list + " nxdomain", refuse + " refuse"));
    for (String blocked : new String[] {"ads.test.", "x.y.ads.test.", "tracker.example.org.", "metrics.test.",
        "a.metrics.test.", "hosts-style.test.", "other.hosts-style.test.", "mixed.case.test."}) {
      Message m = ask(p, blocked, Type.A);
      assertEquals(Rcode.NXDOMAIN, m.getRcode(), blocked);
      assertEquals(15, ede(m), blocked);
    }
    assertNull(ask(p, "example.org.", Type.A));
    assertNull(ask(p, "notads.test.", Type.A));
    assertNull(ask(p, "localhost.", Type.A));
    assertEquals(Rcode.REFUSED, ask(p, "refused.test.", Type.A).getRcode());
    assertNull(ask(p, "allowed.ads.test.", Type.A), "an RPZ passthru lets a listed name through");
  }

  @Test
  void badFilesNameTheKeyTheFileAndTheLine() throws Exception {
    Path list = Files.writeString(dir.resolve("bad.txt"), "ok.test\nbad/name.test\n");
    InvalidConfigException e = assertThrows(InvalidConfigException.class,
        () -> ResponsePolicy.load(new PolicySettings(List.of(), PolicySettings.domainLists(List.of(list + " drop"))),
            new PolicyMetrics()));
    assertTrue(e.getMessage().contains("shoal.policy.domain_lists") && e.getMessage().contains("bad.txt line 2"),
        e.getMessage());
    Path rpz = Files.writeString(dir.resolve("bad.rpz"), "$ORIGIN rpz.test.\n@ SOA a. b. 1 1 1 1 1\nx A 999.1.1.1\n");
    InvalidConfigException r = assertThrows(InvalidConfigException.class,
        () -> ResponsePolicy.load(new PolicySettings(List.of(rpz), List.of()), new PolicyMetrics()));
    assertTrue(r.getMessage().contains("shoal.policy.rpz_files") && r.getMessage().contains("bad.rpz")
        && r.getMessage().contains("3"), r.getMessage());
    InvalidConfigException missing = assertThrows(InvalidConfigException.class,
        () -> ResponsePolicy.load(new PolicySettings(List.of(dir.resolve("none.rpz")), List.of()), new PolicyMetrics()));
    assertTrue(missing.getMessage().contains("none.rpz"), missing.getMessage());
    assertThrows(IllegalArgumentException.class, () -> PolicySettings.domainLists(List.of("list.txt block")));
  }

  @Test
  void aChangedListIsReloaded() throws Exception {
    Path list = Files.writeString(dir.resolve("l.txt"), "one.test\n");
    ResponsePolicy p = ResponsePolicy.load(
        new PolicySettings(List.of(), PolicySettings.domainLists(List.of(list + " nodata"))), new PolicyMetrics());
    assertEquals(Rcode.NOERROR, ask(p, "one.test.", Type.A).getRcode());
    Files.writeString(list, "two.test\n");
    Files.setLastModifiedTime(list, FileTime.fromMillis(System.currentTimeMillis() + 5000));
    assertTrue(p.pollFiles());
    assertNull(ask(p, "one.test.", Type.A));
    assertEquals(15, ede(ask(p, "two.test.", Type.A)));
  }

  @Test
  void theMostSpecificEntryDecides() throws Exception {
    Path broad = Files.writeString(dir.resolve("broad.txt"), "example.org\n");
    Path narrow = Files.writeString(dir.resolve("narrow.txt"), "ads.example.org\n");
    Path rpz = Files.writeString(dir.resolve("more.rpz"), String.join("\n", "$ORIGIN rpz.test.",
        "@ SOA a. b. 1 1 1 1 1", "*.net CNAME *.", "*.b.net CNAME .", "a.b.net CNAME rpz-passthru.", ""));
    ResponsePolicy p = ResponsePolicy.load(new PolicySettings(List.of(rpz),
        PolicySettings.domainLists(List.of(broad + " nxdomain", narrow + " refuse"))), new PolicyMetrics());
    assertEquals(Rcode.REFUSED, ask(p, "x.ads.example.org.", Type.A).getRcode());
    assertEquals(Rcode.NXDOMAIN, ask(p, "www.example.org.", Type.A).getRcode());
    assertEquals(Rcode.NXDOMAIN, ask(p, "x.b.net.", Type.A).getRcode(), "the longer wildcard");
    assertEquals(Rcode.NOERROR, ask(p, "b.net.", Type.A).getRcode(), "*.b.net is not b.net: *.net applies");
    assertNull(ask(p, "a.b.net.", Type.A), "the name's own trigger beats wildcards");
    assertNull(ask(p, "net.", Type.A));
  }
}

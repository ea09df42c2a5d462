package io.shoal.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Master;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/** Which records of a loaded answer belong to its key, as a resolver judges a reply. */
class AnswerChainTest {
  private static List<Record> records(String... lines) throws IOException {
    List<Record> out = new ArrayList<>();
    try (Master m = new Master(new ByteArrayInputStream(
        String.join("\n", lines).concat("\n").getBytes(StandardCharsets.UTF_8)), Name.root)) {
      Record r;
      while ((r = m.nextRecord()) != null) {
        out.add(r);
      }
    }
    return out;
  }

  private static AnswerChain.Kept check(String qname, int qtype, List<Record> answer, List<Record> authority,
      List<Record> additional) throws AnswerChain.Misfit {
    return AnswerChain.check(Name.fromConstantString(qname), qtype, DClass.IN, answer, authority, additional);
  }

  private static String misfit(String qname, int qtype, List<Record> answer) {
    return assertThrows(AnswerChain.Misfit.class, () -> check(qname, qtype, answer, List.of(), List.of())).getMessage();
  }

  @Test
  void aRecordOfAnotherNameIsRefused() throws Exception {
    assertTrue(misfit("www.test.", Type.A, records("www.victim.test. 60 IN A 192.0.2.1")).contains("www.victim.test."));
  }

  @Test
  void aRecordOfAnotherTypeIsRefused() throws Exception {
    misfit("www.test.", Type.A, records("www.test. 60 IN TXT \"x\""));
  }

  @Test
  void aRecordOfAnotherClassIsRefused() throws Exception {
    assertTrue(misfit("www.test.", Type.A, records("www.test. 60 CH A 192.0.2.1")).contains("class"));
  }

  @Test
  void aCnameChainInAnyOrderIsKept() throws Exception {
    List<Record> answer = records("b.other. 60 IN A 192.0.2.1", "www.test. 60 IN CNAME a.other.",
        "a.other. 60 IN CNAME b.other.");
    assertEquals(3, check("www.test.", Type.A, answer, List.of(), List.of()).answer().size());
  }

  @Test
  void aChainThatDoesNotStartAtTheKeyOrBreaksIsRefused() throws Exception {
    misfit("www.test.", Type.A, records("x.test. 60 IN CNAME a.other.", "a.other. 60 IN A 192.0.2.1"));
    misfit("www.test.", Type.A, records("www.test. 60 IN CNAME a.other.", "b.other. 60 IN A 192.0.2.1"));
  }

  @Test
  void aCnameLoopAndTwoCnamesForOneNameAreRefused() throws Exception {
    assertTrue(misfit("a.test.", Type.A, records("a.test. 60 IN CNAME b.test.", "b.test. 60 IN CNAME a.test."))
        .contains("loop"));
    assertTrue(misfit("a.test.", Type.A, records("a.test. 60 IN CNAME b.test.", "a.test. 60 IN CNAME c.test."))
        .contains("two CNAME"));
  }

  @Test
  void aDnameIsFollowedAndItsCnameMustMatchIt() throws Exception {
    List<Record> good = records("old.test. 60 IN DNAME new.test.", "www.old.test. 60 IN CNAME www.new.test.",
        "www.new.test. 60 IN A 192.0.2.1");
    assertEquals(3, check("www.old.test.", Type.A, good, List.of(), List.of()).answer().size());
    assertTrue(misfit("www.old.test.", Type.A, records("old.test. 60 IN DNAME new.test.",
        "www.old.test. 60 IN CNAME www.victim.test.", "www.victim.test. 60 IN A 192.0.2.1")).contains("DNAME"));
    // A DNAME above a name not on the chain does not belong.
    misfit("www.test.", Type.A, records("www.test. 60 IN A 192.0.2.1", "victim.test. 60 IN DNAME x.test."));
  }

  @Test
  void signaturesBelongWhenTheyCoverARecordOfTheChain() throws Exception {
    String sig = " 60 IN RRSIG A 13 2 60 20300101000000 20200101000000 12345 test. AAAA";
    assertEquals(2, check("www.test.", Type.A, records("www.test. 60 IN A 192.0.2.1", "www.test." + sig),
        List.of(), List.of()).answer().size());
    misfit("www.test.", Type.A, records("www.test. 60 IN A 192.0.2.1", "other.test." + sig));
  }

  @Test
  void authorityAndAdditionalRecordsThatDoNotBelongAreDropped() throws Exception {
    List<Record> authority = records("test. 60 IN NS ns.test.", "victim. 60 IN NS ns.attacker.",
        "www.test. 60 IN TXT \"not an authority record\"");
    List<Record> additional = records("ns.test. 60 IN A 192.0.2.53", "www.victim. 60 IN A 192.0.2.66");
    AnswerChain.Kept kept = check("www.test.", Type.A, records("www.test. 60 IN A 192.0.2.1"), authority, additional);
    assertEquals(1, kept.authority().size());
    assertEquals("test.", kept.authority().get(0).getName().toString());
    assertEquals(1, kept.additional().size());
    assertEquals("ns.test.", kept.additional().get(0).getName().toString());
    assertEquals(3, kept.dropped());
  }

  @Test
  void aNegativeAnswerKeepsTheSoaOfAZoneAboveTheLastName() throws Exception {
    List<Record> authority = records("test. 60 IN SOA ns.test. h.test. 1 3600 600 86400 30",
        "victim. 60 IN SOA ns.victim. h.victim. 1 3600 600 86400 30");
    AnswerChain.Kept kept = check("nx.test.", Type.A, List.of(), authority, List.of());
    assertEquals(1, kept.authority().size());
    assertEquals(1, kept.dropped());
  }
}

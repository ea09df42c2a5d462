package io.shoal.profile;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.Messages;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Type;

/** Which profile serves a name: the longest label-aligned suffix. */
class ProfileTableTest {
  private static final Profile ROOT = profile("root");
  private static final Profile CLUSTER = profile("cluster");
  private static final Profile SVC = profile("svc");

  private static final ProfileTable TABLE = new ProfileTable(Map.of(
      ".", ROOT,
      "cluster.local.", CLUSTER,
      "svc.cluster.local.", SVC));

  private static Profile profile(String name) {
    return new Profile(name, null, null, null, null);
  }

  private static Profile match(String name) {
    return TABLE.match(CacheKey.of(name, Type.A, DClass.IN, 0));
  }

  @Test
  void aQuestionAsReadMatchesTheProfileItsKeyMatches() throws Exception {
    for (String name : new String[] {"www.example.com.", "Db.Ns1.SVC.Cluster.Local.", "CLUSTER.local.",
        "xcluster.local.", "xsvc.cluster.local.", "."}) {
      byte[] packet = Messages.wire(Messages.query(1, name, Type.A));
      assertSame(TABLE.match(DnsQuery.parse(packet).key()), TABLE.matchQuestion(packet), name);
    }
    assertNull(TABLE.matchQuestion(Messages.concat(Messages.header(1, 0x01, 0, 1, 0, 0, 0), Messages.bytes(3, 'w'))),
        "a name that runs past the packet");
  }

  @Test
  void rootMatchesEverythingElse() {
    assertSame(ROOT, match("www.example.com."));
    assertSame(ROOT, match("local."));
    assertSame(ROOT, match("."));
  }

  @Test
  void suffixItselfMatches() {
    assertSame(CLUSTER, match("cluster.local."));
  }

  @Test
  void longestSuffixWins() {
    assertSame(CLUSTER, match("a.cluster.local."));
    assertSame(CLUSTER, match("a.b.cluster.local."));
    assertSame(SVC, match("svc.cluster.local."));
    assertSame(SVC, match("db.ns1.svc.cluster.local."));
  }

  @Test
  void suffixMustBeLabelAligned() {
    assertSame(ROOT, match("xcluster.local."));
    assertSame(CLUSTER, match("xsvc.cluster.local."));
  }

  @Test
  void suffixBytesInsideALabelDoNotMatch() throws Exception {
    // The label "x\007cluster" holds the suffix's own bytes, length octet included (RFC 2181
    // section 11 allows any octet in a label): only a comparison at label starts tells them apart.
    byte[] qname = Messages.concat(
        Messages.bytes(9, 'x', 7, 'c', 'l', 'u', 's', 't', 'e', 'r'), Messages.bytes(5, 'l', 'o', 'c', 'a', 'l', 0));
    byte[] packet = Messages.concat(Messages.header(1, 0x01, 0, 1, 0, 0, 0), qname, Messages.bytes(0, 1, 0, 1));

    assertSame(ROOT, TABLE.match(DnsQuery.parse(packet).key()));
  }

  @Test
  void nameCaseDoesNotMatter() throws Exception {
    DnsQuery q = DnsQuery.parse(Messages.wire(Messages.query(1, "Api.SVC.Cluster.LOCAL.", Type.A)));

    assertSame(SVC, TABLE.match(q.key()));
  }

  @Test
  void suffixCaseDoesNotMatter() {
    ProfileTable table = new ProfileTable(Map.of(".", ROOT, "Cluster.LOCAL.", CLUSTER));

    assertSame(CLUSTER, table.match(CacheKey.of("a.cluster.local.", Type.A, DClass.IN, 0)));
  }

  @Test
  void otherTypesAndFlagsMatchTheSameProfile() {
    assertSame(CLUSTER, TABLE.match(CacheKey.of("a.cluster.local.", Type.AAAA, DClass.IN, CacheKey.FLAG_DO)));
    assertSame(CLUSTER, TABLE.match(CacheKey.of("a.cluster.local.", Type.SRV, DClass.CH, CacheKey.FLAG_CD)));
  }

  @Test
  void tableWithoutRootFailsLoudlyForUnmatchedNames() {
    ProfileTable table = new ProfileTable(Map.of("cluster.local.", CLUSTER));

    assertSame(CLUSTER, table.match(CacheKey.of("a.cluster.local.", Type.A, DClass.IN, 0)));
    assertThrows(IllegalStateException.class, () -> table.match(CacheKey.of("example.com.", Type.A, DClass.IN, 0)));
  }
}

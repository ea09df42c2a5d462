package io.shoal.wire;

import static io.shoal.wire.Messages.bytes;
import static io.shoal.wire.Messages.concat;
import static io.shoal.wire.Messages.header;
import static io.shoal.wire.Messages.wire;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Type;

/**
 * {@link CacheKey#hashOfQuery}: the hash a UDP reader warms the cache with, read from the packet
 * as it came, is the hash of the key the parsed query is looked up under.
 */
class QueryHashTest {
  private static void assertSameHashAsParsed(byte[] packet) throws Exception {
    assertEquals(DnsQuery.parse(packet).key().hashCode(), CacheKey.hashOfQuery(packet));
  }

  @Test
  void plainEdnsAndMixedCaseQueriesHashAsTheirKeys() throws Exception {
    for (String name : List.of("www.example.com.", "WwW.ExAmPlE.CoM.", ".", "a.", "n1999.bench.test.")) {
      for (int qtype : new int[] {Type.A, Type.AAAA, Type.MX, Type.DS}) {
        assertSameHashAsParsed(wire(Messages.query(1, name, qtype)));
        assertSameHashAsParsed(wire(Messages.ednsQuery(2, name, qtype, 1232, false)));
        assertSameHashAsParsed(wire(Messages.ednsQuery(3, name, qtype, 4096, true)));
      }
    }
  }

  @Test
  void theDoAndCdBitsChangeTheHashAsTheyChangeTheKey() throws Exception {
    Message cd = Messages.ednsQuery(4, "example.org.", Type.A, 1232, true);
    cd.getHeader().setFlag(Flags.CD);
    byte[] withCd = wire(cd);
    byte[] withDo = wire(Messages.ednsQuery(4, "example.org.", Type.A, 1232, true));
    byte[] plain = wire(Messages.ednsQuery(4, "example.org.", Type.A, 1232, false));

    assertSameHashAsParsed(withCd);
    assertEquals(3, List.of(CacheKey.hashOfQuery(withCd), CacheKey.hashOfQuery(withDo), CacheKey.hashOfQuery(plain))
        .stream().distinct().count(), "DO, CD and neither: three keys, three hashes");
  }

  @Test
  void whatIsNoPlainQueryHashesToZero() {
    byte[] question = concat(bytes(3, 'w', 'w', 'w', 0), bytes(0, 1, 0, 1));
    assertEquals(0, CacheKey.hashOfQuery(concat(header(1, 0x81, 0x80, 1, 0, 0, 0), question)), "a response");
    assertEquals(0, CacheKey.hashOfQuery(concat(header(1, 0x01, 0, 2, 0, 0, 0), question, question)), "two questions");
    assertEquals(0, CacheKey.hashOfQuery(concat(header(1, 0x01, 0, 1, 0, 0, 0), bytes(3, 'w', 'w'))), "cut short");
    assertEquals(0, CacheKey.hashOfQuery(concat(header(1, 0x01, 0, 1, 0, 0, 0), bytes(0xC0, 12, 0, 1, 0, 1))),
        "a compressed name");
    assertEquals(0, CacheKey.hashOfQuery(bytes(1, 2, 3)), "shorter than a header");
  }
}

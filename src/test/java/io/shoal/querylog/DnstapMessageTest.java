package io.shoal.querylog;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.shoal.ingress.Protocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The dnstap bytes decoded with protobuf-java's generic parser, field numbers as in
 * src/main/proto/dnstap.proto.
 */
class DnstapMessageTest {
  private static final long T = 1_700_000_000_123_456_789L;

  private static UnknownFieldSet parse(byte[] b) throws Exception {
    return UnknownFieldSet.parseFrom(b);
  }

  private static long varint(UnknownFieldSet s, int field) {
    return s.getField(field).getVarintList().get(0);
  }

  private static byte[] bytes(UnknownFieldSet s, int field) {
    return s.getField(field).getLengthDelimitedList().get(0).toByteArray();
  }

  @Test
  void aClientResponseCarriesBothMessagesTimesAndTheClient() throws Exception {
    byte[] query = {1, 2, 3};
    byte[] response = {4, 5, 6, 7};
    InetSocketAddress client = new InetSocketAddress(InetAddress.getByName("192.0.2.7"), 40000);
    QueryEvent e = new QueryEvent(QueryEvent.Kind.CLIENT_RESPONSE, Protocol.TCP, client, query, T, response,
        T + 1_500_000_000L, true, false, QueryEvent.Cache.MISS);
    UnknownFieldSet d = parse(new DnstapMessage("shoal-1".getBytes(StandardCharsets.UTF_8),
        "0.1".getBytes(StandardCharsets.UTF_8)).encode(e));
    assertEquals(1, varint(d, 15), "Dnstap.type = MESSAGE");
    assertEquals("shoal-1", new String(bytes(d, 1), StandardCharsets.UTF_8));
    assertEquals("0.1", new String(bytes(d, 2), StandardCharsets.UTF_8));
    UnknownFieldSet m = parse(bytes(d, 14));
    assertEquals(6, varint(m, 1), "CLIENT_RESPONSE");
    assertEquals(1, varint(m, 2), "INET");
    assertEquals(2, varint(m, 3), "TCP");
    assertArrayEquals(new byte[] {(byte) 192, 0, 2, 7}, bytes(m, 4));
    assertEquals(40000, varint(m, 6));
    assertEquals(1_700_000_000L, varint(m, 8));
    assertEquals(123_456_789, m.getField(9).getFixed32List().get(0));
    assertArrayEquals(query, bytes(m, 10));
    assertEquals(1_700_000_001L, varint(m, 12));
    assertEquals(623_456_789, m.getField(13).getFixed32List().get(0));
    assertArrayEquals(response, bytes(m, 14));
    assertFalse(m.hasField(5), "no response address: the listener's is not known per query");
  }

  @Test
  void aClientQueryOverIpv6HasNoResponseAndNoIdentity() throws Exception {
    InetSocketAddress client = new InetSocketAddress(InetAddress.getByName("2001:db8::1"), 53000);
    QueryEvent e = new QueryEvent(QueryEvent.Kind.CLIENT_QUERY, Protocol.UDP, client, new byte[] {9}, T, null, 0,
        true, false, QueryEvent.Cache.MISS);
    UnknownFieldSet d = parse(new DnstapMessage(null, null).encode(e));
    assertFalse(d.hasField(1));
    assertFalse(d.hasField(2));
    UnknownFieldSet m = parse(bytes(d, 14));
    assertEquals(5, varint(m, 1), "CLIENT_QUERY");
    assertEquals(2, varint(m, 2), "INET6");
    assertEquals(1, varint(m, 3), "UDP");
    assertEquals(16, bytes(m, 4).length);
    assertFalse(m.hasField(12));
    assertFalse(m.hasField(14));
  }

  @Test
  void aForwarderResponseNamesTheUpstreamOnTheResponseSide() throws Exception {
    InetSocketAddress server = LoggedUpstream.server("[2001:db8::53]:5353");
    QueryEvent e = new QueryEvent(QueryEvent.Kind.FORWARDER_RESPONSE, null, server, new byte[] {1}, T,
        new byte[] {2}, T + 1000, true, false, QueryEvent.Cache.MISS);
    UnknownFieldSet m = parse(bytes(parse(new DnstapMessage(null, null).encode(e)), 14));
    assertEquals(8, varint(m, 1), "FORWARDER_RESPONSE");
    assertArrayEquals(InetAddress.getByName("2001:db8::53").getAddress(), bytes(m, 5));
    assertEquals(5353, varint(m, 7));
    assertFalse(m.hasField(4));
    assertTrue(m.hasField(14));
    assertEquals(ByteString.copyFrom(new byte[] {1}), m.getField(10).getLengthDelimitedList().get(0));
  }

  @Test
  void upstreamLabelsParseWithoutLookups() {
    assertEquals(new InetSocketAddress("127.0.0.1", 53), LoggedUpstream.server("127.0.0.1:53"));
    assertEquals(null, LoggedUpstream.server("dns.example:53"));
    assertEquals(null, LoggedUpstream.server("nonsense"));
  }
}

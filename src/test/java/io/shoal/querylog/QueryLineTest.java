package io.shoal.querylog;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.shoal.ingress.Protocol;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

class QueryLineTest {
  @Test
  void aLineHasTheQuestionTheRcodeTheCacheAndTheLatency() throws Exception {
    Message q = Message.newQuery(Record.newRecord(Name.fromString("We\\\"ird.example."), Type.AAAA, 1));
    Message r = new Message(q.toWire());
    r.getHeader().setRcode(Rcode.NXDOMAIN);
    QueryEvent e = new QueryEvent(QueryEvent.Kind.CLIENT_RESPONSE, Protocol.TCP, new InetSocketAddress("127.0.0.1", 4000),
        q.toWire(), 1_700_000_000_000_000_000L, r.toWire(), 1_700_000_000_002_500_000L, false, true, QueryEvent.Cache.MISS);
    assertEquals("{\"time\":\"2023-11-14T22:13:20Z\",\"client\":\"127.0.0.1\",\"transport\":\"tcp\","
        + "\"name\":\"We\\\\\\\"ird.example.\",\"type\":\"AAAA\",\"rcode\":\"NXDOMAIN\",\"cache\":\"miss\","
        + "\"latency_ms\":2.500}", QueryLine.format(e));
  }

  @Test
  void aDroppedQueryHasANullRcode() throws Exception {
    Message q = Message.newQuery(Record.newRecord(Name.fromString("a.example."), Type.A, 1));
    QueryEvent e = new QueryEvent(QueryEvent.Kind.CLIENT_RESPONSE, Protocol.UDP, new InetSocketAddress("127.0.0.1", 4000),
        q.toWire(), 0, null, 0, false, true, QueryEvent.Cache.NONE);
    String line = QueryLine.format(e);
    assertEquals(true, line.contains("\"rcode\":null,\"cache\":\"none\""), line);
  }
}

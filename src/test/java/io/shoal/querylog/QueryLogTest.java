package io.shoal.querylog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.shoal.config.QueryLogSettings;
import io.shoal.ingress.Protocol;
import io.shoal.ingress.ReplyPath;
import io.shoal.metrics.QueryLogMetrics;
import io.shoal.testing.Await;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/** The query log without a node: what it costs a query when it takes none, and the JSON log on its own. */
class QueryLogTest {
  private static final InetSocketAddress CLIENT = new InetSocketAddress("127.0.0.1", 5000);
  private static final ReplyPath NOWHERE = (wire, client) -> {};

  private static QueryLogSettings settings(boolean queries, double sample) {
    return new QueryLogSettings(null, null, false, 16, "", "", queries, sample);
  }

  @Test
  void offMeansNoLogAtAll() {
    assertNull(QueryLog.start(settings(false, 1), new QueryLogMetrics(null)));
    assertNull(QueryLog.start(settings(true, 0), new QueryLogMetrics(null)), "sample 0 takes nothing");
  }

  @Test
  void aQueryNotSampledKeepsItsOwnReplyPath() throws Exception {
    QueryLog log = QueryLog.start(settings(true, Double.MIN_VALUE), new QueryLogMetrics(null));
    try {
      assertSame(NOWHERE, log.watch(new byte[12], CLIENT, Protocol.UDP, NOWHERE));
      assertSame(log.forwarder(null), null, "no forwarder log without dnstap");
    } finally {
      log.stop().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void theJsonLogAloneWritesOneLinePerReplyOffTheQueryThread() throws Exception {
    Logger queries = (Logger) LoggerFactory.getLogger("shoal.queries");
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    queries.addAppender(lines);
    QueryLog log = QueryLog.start(settings(true, 1), new QueryLogMetrics(null));
    try {
      byte[] q = Message.newQuery(Record.newRecord(Name.fromString("json.example."), Type.MX, 1)).toWire();
      List<byte[]> sent = new ArrayList<>();
      ReplyPath path = log.watch(q, CLIENT, Protocol.DOT, (wire, client) -> sent.add(wire));
      path.sendCached(q, CLIENT);
      assertEquals(1, sent.size(), "the reply goes out through the wrapped path");
      log.watch(q, CLIENT, Protocol.UDP, NOWHERE).drop();
      assertTrue(Await.until(Duration.ofSeconds(5), () -> lines.list.size() == 2));
      String first = lines.list.get(0).getFormattedMessage();
      assertTrue(first.contains("\"name\":\"json.example.\",\"type\":\"MX\"") && first.contains("\"transport\":\"dot\"")
          && first.contains("\"cache\":\"hit\""),
          first);
      assertEquals("shoal-querylog", lines.list.get(0).getThreadName());
      assertTrue(lines.list.get(1).getFormattedMessage().contains("\"rcode\":null,\"cache\":\"none\""));
    } finally {
      log.stop().toCompletableFuture().get(5, TimeUnit.SECONDS);
      queries.detachAppender(lines);
    }
  }
}

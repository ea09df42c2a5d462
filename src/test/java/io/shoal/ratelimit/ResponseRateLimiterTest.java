package io.shoal.ratelimit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.config.RateLimitSettings;
import io.shoal.metrics.ServerMetrics;
import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** Per-prefix counting per second, slip, exemptions and the truncated replies. */
class ResponseRateLimiterTest {
  private static final ServerMetrics METRICS = new ServerMetrics();
  private final AtomicLong nanos = new AtomicLong(1_000_000_000_000L);

  private ResponseRateLimiter limiter(int perSecond, int slip, boolean loopback, int table) {
    return new ResponseRateLimiter(new RateLimitSettings(perSecond, slip, loopback, table), METRICS, nanos::get);
  }

  private static byte[] reply(boolean edns) throws Exception {
    Message m = Message.newQuery(Record.newRecord(Name.fromString("www.example.com."), Type.A, DClass.IN));
    m.getHeader().setFlag(Flags.QR);
    m.addRecord(new ARecord(Name.fromString("www.example.com."), DClass.IN, 60, InetAddress.getByName("192.0.2.1")),
        Section.ANSWER);
    m.addRecord(new ARecord(Name.fromString("ns.example.com."), DClass.IN, 60, InetAddress.getByName("192.0.2.2")),
        Section.ADDITIONAL);
    if (edns) {
      m.addRecord(new OPTRecord(1232, 0, 0, Flags.DO), Section.ADDITIONAL);
    }
    return m.toWire();
  }

  /** Counts of [sent whole, slipped, dropped] for {@code n} replies to addresses made by {@code address}. */
  private static int[] send(ResponseRateLimiter rrl, byte[] reply, int n, java.util.function.IntFunction<String> address)
      throws Exception {
    int[] out = new int[3];
    for (int i = 0; i < n; i++) {
      byte[] r = rrl.limit(reply, InetAddress.getByName(address.apply(i)));
      out[r == null ? 2 : r == reply ? 0 : 1]++;
    }
    return out;
  }

  @Test
  void aPrefixGetsItsShareASecondThenEveryNthSlips() throws Exception {
    ResponseRateLimiter rrl = limiter(5, 2, false, 1024);
    byte[] reply = reply(false);
    // Ten hosts of one /24 share the budget.
    assertEquals("[5, 2, 3]", java.util.Arrays.toString(send(rrl, reply, 10, i -> "198.51.100." + (i + 1))));
    // Another /24 has its own.
    assertEquals("[5, 0, 0]", java.util.Arrays.toString(send(rrl, reply, 5, i -> "198.51.101.1")));
    // The next second starts afresh.
    nanos.addAndGet(1_000_000_000L);
    assertEquals("[5, 1, 1]", java.util.Arrays.toString(send(rrl, reply, 7, i -> "198.51.100.200")));
  }

  @Test
  void ipv6ClientsAreCountedPerSlash56() throws Exception {
    ResponseRateLimiter rrl = limiter(3, 0, false, 1024);
    byte[] reply = reply(false);
    assertEquals("[3, 0, 3]", java.util.Arrays.toString(
        send(rrl, reply, 6, i -> i % 2 == 0 ? "2001:db8:0:100::" + (i + 1) : "2001:db8:0:1ff::1")));
    assertEquals("[3, 0, 0]", java.util.Arrays.toString(send(rrl, reply, 3, i -> "2001:db8:0:200::1")));
  }

  @Test
  void loopbackIsExemptUnlessIncludedAndZeroIsOff() throws Exception {
    byte[] reply = reply(false);
    assertEquals("[50, 0, 0]", java.util.Arrays.toString(send(limiter(5, 2, false, 1024), reply, 50, i -> "127.0.0.1")));
    assertEquals("[50, 0, 0]", java.util.Arrays.toString(send(limiter(5, 2, false, 1024), reply, 50, i -> "::1")));
    assertEquals("[5, 22, 23]", java.util.Arrays.toString(send(limiter(5, 2, true, 1024), reply, 50, i -> "127.0.0.1")));
    assertEquals("[50, 0, 0]", java.util.Arrays.toString(send(limiter(0, 2, true, 1024), reply, 50, i -> "203.0.113.9")));
  }

  @Test
  void aFloodOfSpoofedPrefixesNeverLimitsAnHonestOne() throws Exception {
    ResponseRateLimiter rrl = limiter(5, 0, false, 1024);
    byte[] reply = reply(false);
    int honestSent = 0;
    for (int i = 0; i < 100_000; i++) {
      rrl.limit(reply, InetAddress.getByAddress(new byte[] {10, (byte) (i >> 16), (byte) (i >> 8), (byte) i}));
      if (i % 20_000 == 0) {
        honestSent += rrl.limit(reply, InetAddress.getByName("192.0.2.1")) == reply ? 1 : 0;
      }
    }
    assertEquals(5, honestSent, "5 replies in one second are within the honest prefix's budget");
  }

  @Test
  void aSlippedReplyKeepsQuestionAndOptAndSetsTc() throws Exception {
    for (boolean edns : new boolean[] {false, true}) {
      byte[] full = reply(edns);
      byte[] cut = TruncatedReply.of(full);
      Message m = new Message(cut);
      assertTrue(m.getHeader().getFlag(Flags.TC));
      assertTrue(m.getHeader().getFlag(Flags.QR));
      assertEquals(new Message(full).getHeader().getID(), m.getHeader().getID());
      assertEquals("www.example.com.", m.getQuestion().getName().toString());
      assertEquals(0, m.getSection(Section.ANSWER).size());
      assertEquals(edns ? 1 : 0, m.getSection(Section.ADDITIONAL).size());
      if (edns) {
        assertNotNull(m.getOPT());
        assertEquals(1232, m.getOPT().getPayloadSize());
        assertTrue((m.getOPT().getFlags() & Flags.DO) != 0);
      } else {
        assertNull(m.getOPT());
      }
    }
    byte[] damaged = java.util.Arrays.copyOf(reply(true), 20);
    Message header = new Message(TruncatedReply.of(damaged));
    assertTrue(header.getHeader().getFlag(Flags.TC));
    assertSame(null, header.getQuestion());
  }
}

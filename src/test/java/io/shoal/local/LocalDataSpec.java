package io.shoal.local;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** shoal.local end to end: records, a hosts file and local zones answered over UDP and TCP, never asked upstream. */
public class LocalDataSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestNode node;
  private static Path hosts;
  private static int nextId = 1;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("upstream.example.test.");
    auth.addA("nas.example.test.");
    Path dir = Files.createTempDirectory("shoal-local-spec");
    hosts = Files.writeString(dir.resolve("hosts"), "192.168.7.1 printer.lan\n");
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.local.records = [\"nas.example.test. A 192.168.7.10\", \"nas.example.test. TXT \\\"local\\\"\","
            + " \"files.lan. CNAME nas.example.test.\"]",
        "shoal.local.hosts_files = [\"" + hosts + "\"]",
        "shoal.local.zones = [\"lan. static\", \"ads.example.test. redirect\"]",
        "shoal.local.records += \"ads.example.test. A 127.0.0.1\""));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private static synchronized int id() {
    nextId = (nextId + 1) & 0xFFFF;
    return nextId;
  }

  private static Message udp(String name, int type) throws Exception {
    return DnsClient.udp(node.udp(), DnsClient.query(id(), name, type, 1232));
  }

  private static Message tcp(String name, int type) throws Exception {
    return DnsClient.tcp(node.tcp(), DnsClient.query(id(), name, type, null));
  }

  @Test
  public void recordsAreAnsweredAuthoritativelyOverUdpAndTcpWithoutAskingUpstream() throws Exception {
    for (Message m : List.of(udp("nas.example.test.", Type.A), tcp("NAS.example.test.", Type.A))) {
      assertEquals(Rcode.NOERROR, m.getRcode());
      assertTrue(m.getHeader().getFlag(Flags.AA));
      assertEquals("192.168.7.10", m.getSection(Section.ANSWER).get(0).rdataToString());
    }
    assertEquals("\"local\"", udp("nas.example.test.", Type.TXT).getSection(Section.ANSWER).get(0).rdataToString());
    Message nodata = udp("nas.example.test.", Type.AAAA);
    assertEquals(Rcode.NOERROR, nodata.getRcode());
    assertEquals(0, nodata.getSection(Section.ANSWER).size());
    assertEquals(Type.SOA, nodata.getSection(Section.AUTHORITY).get(0).getType());
    assertEquals("local data overrides the upstream's", 0, auth.queries("nas.example.test.", Type.A));
    assertEquals(0, auth.queries("nas.example.test.", Type.AAAA));
    assertEquals(Rcode.NOERROR, udp("upstream.example.test.", Type.A).getRcode());
    assertEquals("other names are resolved as usual", 1, auth.queries("upstream.example.test.", Type.A));
  }

  @Test
  public void staticAndRedirectZonesAnswerForTheirNames() throws Exception {
    Message cname = udp("files.lan.", Type.A);
    List<Record> answer = cname.getSection(Section.ANSWER);
    assertEquals(Type.CNAME, answer.get(0).getType());
    assertEquals("192.168.7.10", answer.get(1).rdataToString());
    assertEquals(Rcode.NXDOMAIN, tcp("nothing.lan.", Type.A).getRcode());
    Message redirected = udp("x.y.ads.example.test.", Type.A);
    assertEquals("127.0.0.1", redirected.getSection(Section.ANSWER).get(0).rdataToString());
    assertEquals(0, auth.queries("nothing.lan.", Type.A));
    assertEquals(0, auth.queries("x.y.ads.example.test.", Type.A));
  }

  @Test
  public void aHostsFileIsAnsweredWithPointersAndPickedUpWhenItChanges() throws Exception {
    assertEquals("192.168.7.1", udp("printer.lan.", Type.A).getSection(Section.ANSWER).get(0).rdataToString());
    assertEquals("printer.lan.",
        udp("1.7.168.192.in-addr.arpa.", Type.PTR).getSection(Section.ANSWER).get(0).rdataToString());
    Files.writeString(hosts, "192.168.7.2 printer.lan\n192.168.7.3 scanner.lan\n");
    Files.setLastModifiedTime(hosts, FileTime.fromMillis(System.currentTimeMillis() + 10_000));
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    Message m = udp("scanner.lan.", Type.A);
    while (m.getRcode() != Rcode.NOERROR && System.nanoTime() < deadline) {
      Thread.sleep(100);
      m = udp("scanner.lan.", Type.A);
    }
    assertEquals("192.168.7.3", m.getSection(Section.ANSWER).get(0).rdataToString());
    assertEquals("192.168.7.2", tcp("printer.lan.", Type.A).getSection(Section.ANSWER).get(0).rdataToString());
  }
}

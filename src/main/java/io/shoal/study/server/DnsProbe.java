package io.shoal.study.server;

import io.shoal.study.host.LogTail;
import io.shoal.study.host.StudyException;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;
import org.xbill.DNS.WireParseException;

/** Sends real DNS queries to see whether a server answers, and reads CHAOS TXT statistics. */
public final class DnsProbe {
  private static final Duration TRY_TIMEOUT = Duration.ofMillis(500);

  private DnsProbe() {}

  /**
   * Waits until {@code server} answers a query for {@code name} (any rcode: the server is up),
   * polling until {@code limit}. Fails early if the process died.
   */
  public static void awaitAnswer(String what, InetSocketAddress server, String name, int type, Duration limit,
      Process process, Path log) throws StudyException {
    long deadline = System.nanoTime() + limit.toNanos();
    int tries = 0;
    while (System.nanoTime() < deadline && tries++ < 10_000) {
      if (process != null && !process.isAlive()) {
        throw new StudyException(what + " exited with status " + process.exitValue() + " before answering"
            + LogTail.of(log));
      }
      try {
        if (query(server, name, type, DClass.IN) != null) {
          return;
        }
      } catch (IOException e) {
        // not listening yet (ICMP port unreachable), try again
        sleep(TRY_TIMEOUT);
      }
    }
    throw new StudyException(what + " did not answer a DNS query on " + server + " within "
        + limit.toSeconds() + " s" + LogTail.of(log));
  }

  /** The first string of a CHAOS-class TXT answer (e.g. dnsmasq's hits.bind), or null. */
  public static String chaosText(InetSocketAddress server, String name) throws IOException {
    Message reply = query(server, name, Type.TXT, DClass.CH);
    if (reply == null) {
      return null;
    }
    for (Record r : reply.getSection(Section.ANSWER)) {
      if (r instanceof org.xbill.DNS.TXTRecord txt && !txt.getStrings().isEmpty()) {
        return txt.getStrings().get(0);
      }
    }
    return null;
  }

  /** One query over UDP; the reply, or null after the timeout. */
  static Message query(InetSocketAddress server, String name, int type, int dclass) throws IOException {
    Message q = Message.newQuery(Record.newRecord(Name.fromString(name, Name.root), type, dclass));
    q.getHeader().setFlag(Flags.RD);
    byte[] wire = q.toWire();
    try (DatagramSocket s = new DatagramSocket()) {
      s.setSoTimeout((int) TRY_TIMEOUT.toMillis());
      s.connect(server);
      s.send(new DatagramPacket(wire, wire.length));
      byte[] buf = new byte[4096];
      DatagramPacket p = new DatagramPacket(buf, buf.length);
      long deadline = System.nanoTime() + TRY_TIMEOUT.toNanos();
      while (System.nanoTime() < deadline) {
        try {
          s.receive(p);
        } catch (SocketTimeoutException e) {
          return null;
        }
        try {
          Message reply = new Message(java.util.Arrays.copyOf(buf, p.getLength()));
          if (reply.getHeader().getID() == q.getHeader().getID()) {
            return reply;
          }
        } catch (WireParseException e) {
          // not a DNS message for us; keep waiting
        }
      }
      return null;
    }
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

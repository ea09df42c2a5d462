package io.shoal.recursion;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Master;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.RRset;
import org.xbill.DNS.Section;
import org.xbill.DNS.SetResponse;
import org.xbill.DNS.Type;
import org.xbill.DNS.Zone;

/**
 * Authoritative servers in the test's JVM, each on its own loopback address (127.R.S.n, R and S
 * picked at random per instance so parallel tests do not meet) and all on one port the OS gave,
 * answering from dnsjava {@link Zone}s as an authority does: data with AA, referrals with glue and
 * without AA, NXDOMAIN and NODATA with the SOA, CNAME and DNAME links. A server can be made
 * silent, REFUSED-only or upward-referring, and counts the queries it got.
 */
final class FakeAuthorities implements AutoCloseable {
  /** How one server behaves. */
  enum Behaviour { NORMAL, SILENT, REFUSED, UPWARD }

  /** One server: its address, its zones and what it did. */
  final class Server {
    final InetAddress address;
    final List<Zone> zones = new ArrayList<>();
    final AtomicInteger queries = new AtomicInteger();
    final Map<String, AtomicInteger> asked = new ConcurrentHashMap<>();
    /** Each question name as it came, letter case and all. */
    final List<String> spellings = java.util.Collections.synchronizedList(new ArrayList<>());
    volatile Behaviour behaviour = Behaviour.NORMAL;
    final DatagramSocket socket;

    Server(InetAddress address, DatagramSocket socket) {
      this.address = address;
      this.socket = socket;
    }

    /** Serves zone {@code apex} from {@code text} (zone-file lines). */
    Server zone(String apex, String text) throws IOException {
      Name origin = Name.fromString(apex);
      List<Record> records = new ArrayList<>();
      try (Master m = new Master(new java.io.ByteArrayInputStream(text.getBytes()), origin, 300)) {
        for (Record r = m.nextRecord(); r != null; r = m.nextRecord()) {
          records.add(r);
        }
      }
      zones.add(new Zone(origin, records.toArray(new Record[0])));
      return this;
    }

    int asked(String name, int type) {
      AtomicInteger n = asked.get(name.toLowerCase() + "/" + Type.string(type));
      return n == null ? 0 : n.get();
    }

    String ip() {
      return address.getHostAddress();
    }
  }

  private final List<Server> servers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private int port;
  private String prefix;
  private volatile boolean running = true;

  /** {@code count} servers on 127.R.S.1 to 127.R.S.count, one port. */
  FakeAuthorities(int count) throws IOException {
    IOException last = null;
    for (int attempt = 0; attempt < 20; attempt++) {
      String p = "127." + ThreadLocalRandom.current().nextInt(60, 250) + "." + ThreadLocalRandom.current().nextInt(1, 250) + ".";
      List<DatagramSocket> opened = new ArrayList<>();
      try {
        DatagramSocket first = new DatagramSocket(new InetSocketAddress(InetAddress.getByName(p + "1"), 0));
        opened.add(first);
        int pt = first.getLocalPort();
        for (int i = 2; i <= count; i++) {
          opened.add(new DatagramSocket(new InetSocketAddress(InetAddress.getByName(p + i), pt)));
        }
        this.port = pt;
        this.prefix = p;
        for (DatagramSocket s : opened) {
          Server server = new Server(s.getLocalAddress(), s);
          servers.add(server);
          Thread t = new Thread(() -> serve(server), "fake-authority-" + s.getLocalAddress().getHostAddress());
          t.setDaemon(true);
          t.start();
          threads.add(t);
        }
        return;
      } catch (SocketException e) {
        last = e;
        opened.forEach(DatagramSocket::close);
      }
    }
    throw new IOException("no set of loopback addresses with a common free port", last);
  }

  Server server(int n) {
    return servers.get(n - 1);
  }

  int port() {
    return port;
  }

  String ip(int n) {
    return prefix + n;
  }

  int totalQueries() {
    return servers.stream().mapToInt(s -> s.queries.get()).sum();
  }

  private void serve(Server s) {
    byte[] buf = new byte[4096];
    while (running) {
      DatagramPacket p = new DatagramPacket(buf, buf.length);
      try {
        s.socket.receive(p);
      } catch (IOException e) {
        return; // closed
      }
      try {
        Message q = new Message(java.util.Arrays.copyOf(p.getData(), p.getLength()));
        s.queries.incrementAndGet();
        Record question = q.getQuestion();
        s.spellings.add(question.getName().toString());
        s.asked.computeIfAbsent(question.getName().toString().toLowerCase() + "/" + Type.string(question.getType()),
            k -> new AtomicInteger()).incrementAndGet();
        Message reply = answer(s, q);
        if (reply == null) {
          continue;
        }
        byte[] out = reply.toWire(p.getLength() > 0 && q.getOPT() != null ? 1232 : 512);
        s.socket.send(new DatagramPacket(out, out.length, p.getSocketAddress()));
      } catch (IOException | RuntimeException e) {
        // a bad query: no answer
      }
    }
  }

  private Message answer(Server s, Message q) {
    Message r = new Message(q.getHeader().getID());
    r.getHeader().setFlag(Flags.QR);
    r.getHeader().setOpcode(Opcode.QUERY);
    Record question = q.getQuestion();
    r.addRecord(question, Section.QUESTION);
    switch (s.behaviour) {
      case SILENT:
        return null;
      case REFUSED:
        r.getHeader().setRcode(Rcode.REFUSED);
        return r;
      case UPWARD:
        // Refers to the root: a lame server's classic.
        r.addRecord(new org.xbill.DNS.NSRecord(Name.root, 1, 300, Name.fromConstantString("a.root.")), Section.AUTHORITY);
        return r;
      default:
        break;
    }
    Name qname = question.getName();
    Zone zone = null;
    for (Zone z : s.zones) {
      if (qname.subdomain(z.getOrigin()) && (zone == null || z.getOrigin().labels() > zone.getOrigin().labels())) {
        zone = z;
      }
    }
    if (zone == null) {
      r.getHeader().setRcode(Rcode.REFUSED);
      return r;
    }
    Name cur = qname;
    boolean aa = true;
    for (int link = 0; link < 12; link++) {
      SetResponse sr = zone.findRecords(cur, question.getType());
      if (sr.isDelegation()) {
        RRset ns = sr.getNS();
        ns.rrs().forEach(rec -> r.addRecord(rec, Section.AUTHORITY));
        for (Record rec : ns.rrs()) {
          Name target = ((org.xbill.DNS.NSRecord) rec).getTarget();
          addGlue(zone, target, r);
        }
        RRset ds = zone.findExactMatch(ns.getName(), Type.DS);
        if (ds != null) {
          ds.rrs().forEach(rec -> r.addRecord(rec, Section.AUTHORITY));
        }
        aa = link > 0;
        break;
      }
      if (sr.isCNAME()) {
        Record c = sr.getCNAME();
        r.addRecord(c, Section.ANSWER);
        cur = ((org.xbill.DNS.CNAMERecord) c).getTarget();
        if (!cur.subdomain(zone.getOrigin())) {
          break;
        }
        continue;
      }
      if (sr.isDNAME()) {
        org.xbill.DNS.DNAMERecord d = sr.getDNAME();
        r.addRecord(d, Section.ANSWER);
        try {
          Name target = cur.fromDNAME(d);
          r.addRecord(new org.xbill.DNS.CNAMERecord(cur, d.getDClass(), d.getTTL(), target), Section.ANSWER);
          cur = target;
        } catch (org.xbill.DNS.NameTooLongException e) {
          r.getHeader().setRcode(Rcode.YXDOMAIN);
          break;
        }
        if (!cur.subdomain(zone.getOrigin())) {
          break;
        }
        continue;
      }
      if (sr.isSuccessful()) {
        for (RRset set : sr.answers()) {
          set.rrs().forEach(rec -> r.addRecord(rec, Section.ANSWER));
        }
        break;
      }
      if (sr.isNXDOMAIN()) {
        r.getHeader().setRcode(Rcode.NXDOMAIN);
      }
      r.addRecord(zone.getSOA(), Section.AUTHORITY);
      break;
    }
    if (aa) {
      r.getHeader().setFlag(Flags.AA);
    }
    return r;
  }

  private static void addGlue(Zone zone, Name target, Message r) {
    if (!target.subdomain(zone.getOrigin())) {
      return;
    }
    for (int type : new int[] {Type.A, Type.AAAA}) {
      RRset set = zone.findExactMatch(target, type);
      if (set != null) {
        set.rrs().forEach(rec -> r.addRecord(rec, Section.ADDITIONAL));
      }
    }
  }

  @Override
  public void close() {
    running = false;
    servers.forEach(s -> s.socket.close());
    for (Thread t : threads) {
      try {
        t.join(2000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}

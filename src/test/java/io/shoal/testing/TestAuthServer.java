package io.shoal.testing;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * A small authoritative server for {@code example.test.} on 127.0.0.1 (UDP and TCP, same port),
 * built on dnsjava, that counts the queries it gets and can misbehave on purpose: stay silent,
 * or send spoofed responses before the real one.
 */
public final class TestAuthServer implements AutoCloseable {
  public static final Name ZONE = name("example.test.");
  /** SOA TTL 3600, MINIMUM 30: negative answers are cacheable for min(3600, 30) = 30 s. */
  public static final long SOA_TTL = 3600;
  public static final long SOA_MINIMUM = 30;

  private final DatagramSocket udp;
  private final ServerSocket tcp;
  private final Map<Name, List<Record>> records = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<Socket> connections = new CopyOnWriteArrayList<>();
  private final AtomicInteger spoofsSent = new AtomicInteger();
  private volatile boolean silent;
  private volatile long delayMs;
  private volatile boolean spoofFirst;
  private volatile boolean running = true;

  public TestAuthServer() throws IOException {
    DatagramSocket u = null;
    ServerSocket t = null;
    for (int attempt = 0; attempt < 20 && t == null; attempt++) {
      u = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      try {
        t = new ServerSocket(u.getLocalPort(), 50, InetAddress.getLoopbackAddress());
      } catch (IOException e) {
        u.close();
      }
    }
    if (t == null) {
      throw new IOException("no free port for both UDP and TCP");
    }
    this.udp = u;
    this.tcp = t;
    start("auth-udp", this::serveUdp);
    start("auth-tcp", this::acceptTcp);
  }

  private void start(String name, Runnable r) {
    Thread th = new Thread(r, name);
    th.setDaemon(true);
    th.start();
    threads.add(th);
  }

  public static Name name(String s) {
    try {
      return Name.fromString(s);
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  public InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), udp.getLocalPort());
  }

  /** "127.0.0.1:port", as shoal's config takes it. */
  public String hostPort() {
    return "127.0.0.1:" + udp.getLocalPort();
  }

  public TestAuthServer add(Record r) {
    records.computeIfAbsent(r.getName(), n -> new CopyOnWriteArrayList<>()).add(r);
    return this;
  }

  /** Replaces every record of {@code r}'s name and type with {@code r}: the zone was edited. */
  public TestAuthServer replace(Record r) {
    List<Record> list = records.computeIfAbsent(r.getName(), n -> new CopyOnWriteArrayList<>());
    list.removeIf(old -> old.getType() == r.getType());
    list.add(r);
    return this;
  }

  public void silent(boolean on) {
    silent = on;
  }

  /** Holds each UDP answer back this long (the UDP side answers one query at a time). */
  public void delay(long ms) {
    delayMs = ms;
  }

  /** Before each real UDP answer, send one with a wrong ID and one for a different question. */
  public void spoofFirst(boolean on) {
    spoofFirst = on;
  }

  public int spoofsSent() {
    return spoofsSent.get();
  }

  /** Queries received for {@code name} (any case) and {@code type}, over both transports. */
  public int queries(String name, int type) {
    AtomicInteger c = counts.get(key(name(name), type));
    return c == null ? 0 : c.get();
  }

  /** Queries received for any name. */
  public int totalQueries() {
    return counts.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  private static String key(Name n, int type) {
    return n.toString().toLowerCase() + "/" + Type.string(type);
  }

  Message answer(Message query) {
    Message r = new Message(query.getHeader().getID());
    r.getHeader().setFlag(Flags.QR);
    r.getHeader().setFlag(Flags.AA);
    if (query.getHeader().getFlag(Flags.RD)) {
      r.getHeader().setFlag(Flags.RD);
    }
    Record q = query.getQuestion();
    r.addRecord(q, Section.QUESTION);
    if (query.getOPT() != null) {
      r.addRecord(new OPTRecord(1232, 0, 0, query.getOPT().getFlags()), Section.ADDITIONAL);
    }
    Name qname = q.getName();
    List<Record> owned = records.get(canonical(qname));
    if (owned == null) {
      if (qname.subdomain(ZONE)) {
        r.getHeader().setRcode(Rcode.NXDOMAIN);
        r.addRecord(soa(), Section.AUTHORITY);
      } else {
        r.getHeader().setRcode(Rcode.REFUSED);
      }
      return r;
    }
    boolean any = false;
    for (Record rec : owned) {
      if (rec.getType() == q.getType()) {
        // Owner in the query's case, as real servers do when they copy the question name.
        r.addRecord(rec.withName(qname), Section.ANSWER);
        any = true;
      }
    }
    if (!any) {
      r.addRecord(soa(), Section.AUTHORITY);
    }
    return r;
  }

  private Name canonical(Name n) {
    for (Name k : records.keySet()) {
      if (k.equals(n)) {
        return k;
      }
    }
    return n;
  }

  private static SOARecord soa() {
    return new SOARecord(ZONE, DClass.IN, SOA_TTL, name("ns.example.test."), name("hostmaster.example.test."),
        1, 3600, 600, 86400, SOA_MINIMUM);
  }

  private void count(Message query) {
    Record q = query.getQuestion();
    counts.computeIfAbsent(key(q.getName(), q.getType()), k -> new AtomicInteger()).incrementAndGet();
  }

  private void serveUdp() {
    byte[] buf = new byte[65535];
    while (running) {
      DatagramPacket p = new DatagramPacket(buf, buf.length);
      try {
        udp.receive(p);
        Message query = new Message(java.util.Arrays.copyOf(buf, p.getLength()));
        count(query);
        if (silent) {
          continue;
        }
        if (delayMs > 0) {
          Thread.sleep(delayMs);
        }
        Message answer = answer(query);
        int limit = query.getOPT() != null ? Math.max(512, query.getOPT().getPayloadSize()) : 512;
        if (spoofFirst) {
          sendSpoofs(query, answer, p);
        }
        byte[] out = answer.toWire(limit);
        udp.send(new DatagramPacket(out, out.length, p.getSocketAddress()));
      } catch (SocketException | InterruptedException e) {
        return;
      } catch (IOException e) {
        // a test may send garbage here too; ignore it
      }
    }
  }

  private void sendSpoofs(Message query, Message answer, DatagramPacket from) throws IOException {
    Message wrongId = answer.clone();
    wrongId.getHeader().setID((query.getHeader().getID() + 1) & 0xFFFF);
    byte[] a = wrongId.toWire(512);
    udp.send(new DatagramPacket(a, a.length, from.getSocketAddress()));
    Message wrongQuestion = new Message(query.getHeader().getID());
    wrongQuestion.getHeader().setFlag(Flags.QR);
    wrongQuestion.addRecord(Record.newRecord(name("evil.example.test."), query.getQuestion().getType(), DClass.IN),
        Section.QUESTION);
    byte[] b = wrongQuestion.toWire();
    udp.send(new DatagramPacket(b, b.length, from.getSocketAddress()));
    spoofsSent.addAndGet(2);
  }

  private void acceptTcp() {
    while (running) {
      try {
        Socket s = tcp.accept();
        connections.add(s);
        start("auth-tcp-conn", () -> serveTcp(s));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serveTcp(Socket s) {
    try (s) {
      DataInputStream in = new DataInputStream(s.getInputStream());
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      while (running) {
        int len = in.readUnsignedShort();
        Message query = new Message(in.readNBytes(len));
        count(query);
        if (silent) {
          continue;
        }
        byte[] wire = answer(query).toWire();
        out.writeShort(wire.length);
        out.write(wire);
        out.flush();
      }
    } catch (IOException e) {
      // connection closed
    }
  }

  @Override
  public void close() {
    running = false;
    udp.close();
    try {
      tcp.close();
      for (Socket s : connections) {
        s.close();
      }
    } catch (IOException ignored) {
      // test teardown
    }
  }
}

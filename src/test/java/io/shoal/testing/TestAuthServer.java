package io.shoal.testing;

import java.io.ByteArrayOutputStream;
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
import org.xbill.DNS.ARecord;
import org.xbill.DNS.CNAMERecord;
import org.xbill.DNS.CookieOption;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedErrorCodeOption;
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
 * built on dnsjava, that counts the queries it gets, follows CNAMEs inside its data, and can
 * misbehave on purpose: stay silent, send spoofed responses before the real one, or answer some
 * names in one of the {@link Mode}s.
 */
public final class TestAuthServer implements AutoCloseable {
  /** How the answers for one name go wrong (or unusual but legal). */
  public enum Mode {
    /** REFUSED, with an extended DNS error (RFC 8914) in the OPT when the query had one. */
    REFUSED,
    /** An OPT advertising 4096 bytes with a COOKIE option and an extended DNS error. */
    COOKIE,
    /** The first answer record's TTL has the top bit set: 0x80000010. */
    TOP_BIT_TTL,
    /** OPT first in the additional section, then an A and an AAAA for ns.&lt;name&gt;, the AAAA's owner compressed to the A's. */
    OPT_FIRST,
    /** The first answer record's owner is a compression pointer to itself. */
    SELF_POINTER,
    /** No answer at all. */
    SILENT
  }

  /** The TTL {@link Mode#TOP_BIT_TTL} writes. */
  public static final long TOP_BIT_TTL = 0x80000010L;

  public static final Name ZONE = name("example.test.");
  /** SOA TTL 3600, MINIMUM 30: negative answers are cacheable for min(3600, 30) = 30 s. */
  public static final long SOA_TTL = 3600;
  public static final long SOA_MINIMUM = 30;

  private final DatagramSocket udp;
  /** Sends the answers held back by {@link #delay}. */
  private final java.util.concurrent.ScheduledExecutorService delayed =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "test-auth-delayed");
        t.setDaemon(true);
        return t;
      });
  private final ServerSocket tcp;
  private final Map<Name, List<Record>> records = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
  private final Map<Name, Mode> modes = new ConcurrentHashMap<>();
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

  /** Adds {@code name} IN A 192.0.2.7 with TTL 60: an answer any test can ask for. */
  public TestAuthServer addA(String name) {
    try {
      return add(new org.xbill.DNS.ARecord(name(name), org.xbill.DNS.DClass.IN, 60,
          InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 7})));
    } catch (java.net.UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  public TestAuthServer add(Record r) {
    records.computeIfAbsent(r.getName(), n -> new CopyOnWriteArrayList<>()).add(r);
    return this;
  }

  /** Answers {@code name} (any case) in {@code mode} from now on. */
  public TestAuthServer mode(String name, Mode mode) {
    modes.put(lower(name(name)), mode);
    return this;
  }

  private static Name lower(Name n) {
    return name(n.toString().toLowerCase());
  }

  private Mode modeOf(Message query) {
    return modes.get(lower(query.getQuestion().getName()));
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

  /** What was asked so far, "name/type" to count, for a failing test's message. */
  public String asked() {
    return new java.util.TreeMap<>(counts).toString();
  }

  /** Queries received for any name. */
  public int totalQueries() {
    return counts.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  private static String key(Name n, int type) {
    return n.toString().toLowerCase() + "/" + Type.string(type);
  }

  Message answer(Message query) {
    Mode mode = modeOf(query);
    Message r = new Message(query.getHeader().getID());
    r.getHeader().setFlag(Flags.QR);
    r.getHeader().setFlag(Flags.AA);
    if (query.getHeader().getFlag(Flags.RD)) {
      r.getHeader().setFlag(Flags.RD);
    }
    Record q = query.getQuestion();
    r.addRecord(q, Section.QUESTION);
    if (query.getOPT() != null) {
      r.addRecord(opt(mode, query.getOPT().getFlags()), Section.ADDITIONAL);
    }
    if (mode == Mode.REFUSED) {
      r.getHeader().setRcode(Rcode.REFUSED);
      return r;
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
    Name owner = qname;
    // Follow CNAMEs inside our own data, as an authoritative server does (bounded).
    for (int hop = 0; hop < 8 && owned != null && !any; hop++) {
      Name next = null;
      for (Record rec : owned) {
        if (rec.getType() == q.getType()) {
          // Owner in the query's case, as real servers do when they copy the question name.
          r.addRecord(rec.withName(owner), Section.ANSWER);
          any = true;
        } else if (rec.getType() == Type.CNAME && q.getType() != Type.CNAME) {
          r.addRecord(rec.withName(owner), Section.ANSWER);
          next = ((CNAMERecord) rec).getTarget();
        }
      }
      if (any || next == null) {
        break;
      }
      owner = next;
      owned = records.get(canonical(next));
    }
    if (r.getSection(Section.ANSWER).isEmpty()) {
      r.addRecord(soa(), Section.AUTHORITY);
    }
    return r;
  }

  /**
   * The answer with OPT first in its additional section, then an A and an AAAA for
   * ns.&lt;qname&gt;, the AAAA's owner a pointer to the A's. Written by hand: dnsjava always puts
   * the OPT last.
   */
  private byte[] optFirst(Message query) throws IOException {
    Message m = answer(query);
    OPTRecord opt = m.getOPT();
    if (opt == null) {
      return m.toWire();
    }
    m.removeRecord(opt, Section.ADDITIONAL);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(m.toWire());
    out.writeBytes(opt.toWire(Section.ADDITIONAL));
    int aOwner = out.size();
    Name ns = Name.concatenate(name("ns"), query.getQuestion().getName());
    out.writeBytes(new ARecord(ns, DClass.IN, 120, InetAddress.getByName("192.0.2.53")).toWire(Section.ADDITIONAL));
    out.write(0xC0 | aOwner >> 8);
    out.write(aOwner);
    out.writeBytes(new byte[] {0, 28, 0, 1, 0, 0, 0, 120, 0, 16});
    out.writeBytes(InetAddress.getByName("2001:db8::53").getAddress());
    byte[] wire = out.toByteArray();
    int ar = ((wire[10] & 0xFF) << 8 | (wire[11] & 0xFF)) + 3;
    wire[10] = (byte) (ar >> 8);
    wire[11] = (byte) ar;
    return wire;
  }

  private static OPTRecord opt(Mode mode, int flags) {
    if (mode == Mode.COOKIE) {
      byte[] client = {1, 2, 3, 4, 5, 6, 7, 8};
      byte[] server = {9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
      return new OPTRecord(4096, 0, 0, flags, List.of(
          new CookieOption(client, server),
          new ExtendedErrorCodeOption(ExtendedErrorCodeOption.OTHER, "upstream note")));
    }
    if (mode == Mode.REFUSED) {
      return new OPTRecord(1232, 0, 0, flags, List.of(
          new ExtendedErrorCodeOption(ExtendedErrorCodeOption.PROHIBITED, "upstream says no")));
    }
    return new OPTRecord(1232, 0, 0, flags);
  }

  /** The answer's bytes, with the byte-level misbehaviour of {@code mode} applied. */
  private byte[] wire(Message query, int limit) throws IOException {
    Mode mode = modeOf(query);
    if (mode == Mode.OPT_FIRST) {
      return optFirst(query);
    }
    byte[] out = answer(query).toWire(limit);
    if ((mode == Mode.TOP_BIT_TTL || mode == Mode.SELF_POINTER) && ((out[6] << 8) | (out[7] & 0xFF)) > 0) {
      int owner = questionEnd(out);
      if (mode == Mode.SELF_POINTER) {
        out[owner] = (byte) (0xC0 | owner >> 8);
        out[owner + 1] = (byte) owner;
      } else {
        // dnsjava compresses the first answer's owner to a pointer to the question: 2 bytes.
        int ttl = owner + 2 + 4;
        out[ttl] = (byte) (TOP_BIT_TTL >>> 24);
        out[ttl + 1] = (byte) (TOP_BIT_TTL >>> 16);
        out[ttl + 2] = (byte) (TOP_BIT_TTL >>> 8);
        out[ttl + 3] = (byte) TOP_BIT_TTL;
      }
    }
    return out;
  }

  private static int questionEnd(byte[] wire) {
    int pos = 12;
    while (wire[pos] != 0) {
      pos += (wire[pos] & 0xFF) + 1;
    }
    return pos + 1 + 4;
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
        if (silent || modeOf(query) == Mode.SILENT) {
          continue;
        }
        java.net.SocketAddress client = p.getSocketAddress();
        long delay = delayMs;
        if (delay > 0) {
          // Each answer waits on its own, as a slow server's do: one slow question (shoal's loop
          // probe at start, say) must not hold back the answers to the others.
          delayed.schedule(() -> reply(query, client), delay, java.util.concurrent.TimeUnit.MILLISECONDS);
        } else {
          reply(query, client);
        }
      } catch (SocketException e) {
        return;
      } catch (IOException e) {
        // a test may send garbage here too; ignore it
      }
    }
  }

  private void reply(Message query, java.net.SocketAddress client) {
    try {
      int limit = query.getOPT() != null ? Math.max(512, query.getOPT().getPayloadSize()) : 512;
      if (spoofFirst) {
        sendSpoofs(query, answer(query), client);
      }
      byte[] out = wire(query, limit);
      udp.send(new DatagramPacket(out, out.length, client));
    } catch (IOException e) {
      // closed meanwhile, or a query it cannot answer: as a server that went away
    }
  }

  private void sendSpoofs(Message query, Message answer, java.net.SocketAddress from) throws IOException {
    Message wrongId = answer.clone();
    wrongId.getHeader().setID((query.getHeader().getID() + 1) & 0xFFFF);
    byte[] a = wrongId.toWire(512);
    udp.send(new DatagramPacket(a, a.length, from));
    Message wrongQuestion = new Message(query.getHeader().getID());
    wrongQuestion.getHeader().setFlag(Flags.QR);
    wrongQuestion.addRecord(Record.newRecord(name("evil.example.test."), query.getQuestion().getType(), DClass.IN),
        Section.QUESTION);
    byte[] b = wrongQuestion.toWire();
    udp.send(new DatagramPacket(b, b.length, from));
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
        if (silent || modeOf(query) == Mode.SILENT) {
          continue;
        }
        byte[] wire = wire(query, 65535);
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
    delayed.shutdownNow();
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

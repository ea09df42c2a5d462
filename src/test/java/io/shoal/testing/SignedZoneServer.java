package io.shoal.testing;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.DNSKEYRecord;
import org.xbill.DNS.DNSSEC;
import org.xbill.DNS.DSRecord;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSEC3PARAMRecord;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.NSECRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.RRset;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;
import org.xbill.DNS.utils.base32;

/**
 * A small DNSSEC-signed authoritative server over UDP for one zone, signed here with dnsjava: an
 * ECDSA P-256 key (algorithm 13) as KSK and ZSK, an RRSIG on every RRset, an NSEC chain (or, with
 * {@link #nsec3()}, an NSEC3 chain: SHA-1, no salt, no extra iterations, no opt-out) proving
 * NXDOMAIN and NODATA. Signatures go out only to queries with DO, as a real server does. A test
 * can give one RRset its own signature window (expired) or change a record after signing, and
 * count the queries it got.
 */
public final class SignedZoneServer implements AutoCloseable {
  private static final long TTL = 300;

  public final Name zone;
  private final KeyPair keys;
  private final DNSKEYRecord dnskey;
  /** Owner names in canonical order (Name's order), each with its RRsets by type. */
  private final TreeMap<Name, Map<Integer, RRset>> names = new TreeMap<>();
  private final Map<String, Instant[]> windows = new HashMap<>();
  private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
  private final AtomicInteger total = new AtomicInteger();
  /** The NSEC3 chain by hashed owner name (empty: the zone is signed with NSEC). */
  private final TreeMap<Name, RRset> nsec3 = new TreeMap<>();
  private NSEC3PARAMRecord nsec3Param;
  private final DatagramSocket udp;
  private final Thread thread;
  private volatile boolean signed;

  public SignedZoneServer(String zone) throws Exception {
    this.zone = TestAuthServer.name(zone);
    KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
    gen.initialize(new ECGenParameterSpec("secp256r1"));
    this.keys = gen.generateKeyPair();
    this.dnskey = new DNSKEYRecord(this.zone, DClass.IN, TTL, 257, DNSKEYRecord.Protocol.DNSSEC,
        DNSSEC.Algorithm.ECDSAP256SHA256, keys.getPublic());
    add(dnskey);
    add(new SOARecord(this.zone, DClass.IN, TTL, TestAuthServer.name("ns." + zone), TestAuthServer.name("admin." + zone),
        1, 3600, 600, 86400, 60));
    this.udp = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    this.thread = new Thread(this::serve, "signed-zone");
    thread.setDaemon(true);
    thread.start();
  }

  /** Adds {@code name} IN A {@code address} (TTL 300); call before {@link #sign()}. */
  public SignedZoneServer addA(String name, String address) throws IOException {
    return add(new ARecord(TestAuthServer.name(name), DClass.IN, TTL, InetAddress.getByName(address)));
  }

  public SignedZoneServer add(Record r) {
    names.computeIfAbsent(r.getName(), n -> new HashMap<>())
        .computeIfAbsent(r.getType(), t -> new RRset()).addRR(r);
    return this;
  }

  /** Signs {@code name}'s A RRset with this window instead of the default one. */
  public SignedZoneServer window(String name, Instant inception, Instant expiration) {
    windows.put(key(TestAuthServer.name(name), Type.A), new Instant[] {inception, expiration});
    return this;
  }

  /** Signs with an NSEC3 chain instead of NSEC; call before {@link #sign()}. */
  public SignedZoneServer nsec3() {
    nsec3Param = new NSEC3PARAMRecord(zone, DClass.IN, 0, NSEC3Record.SHA1_DIGEST_ID, 0, 0, new byte[0]);
    return add(nsec3Param);
  }

  /** Adds the NSEC (or NSEC3) chain and signs every RRset: valid from an hour ago for a week, unless windowed. */
  public SignedZoneServer sign() throws Exception {
    if (nsec3Param != null) {
      return signNsec3();
    }
    List<Name> owners = new ArrayList<>(names.keySet());
    for (int i = 0; i < owners.size(); i++) {
      Name owner = owners.get(i);
      Map<Integer, RRset> node = names.get(owner);
      List<Integer> types = new ArrayList<>(node.keySet());
      types.add(Type.RRSIG);
      types.add(Type.NSEC);
      Name next = owners.get((i + 1) % owners.size());
      node.put(Type.NSEC, new RRset(new NSECRecord(owner, DClass.IN, 60, next,
          types.stream().mapToInt(Integer::intValue).toArray())));
    }
    return signAll();
  }

  /** The NSEC3 chain over every owner (the zone has no empty non-terminals: names are one label below). */
  private SignedZoneServer signNsec3() throws Exception {
    TreeMap<String, Name> byHash = new TreeMap<>();
    for (Name owner : names.keySet()) {
      byHash.put(hashLabel(owner), owner);
    }
    List<String> hashes = new ArrayList<>(byHash.keySet());
    for (int i = 0; i < hashes.size(); i++) {
      Map<Integer, RRset> node = names.get(byHash.get(hashes.get(i)));
      List<Integer> types = new ArrayList<>(node.keySet());
      types.add(Type.RRSIG);
      byte[] next = HEX32.fromString(hashes.get((i + 1) % hashes.size()).toUpperCase());
      Name owner = new Name(hashes.get(i), zone);
      nsec3.put(owner, new RRset(new NSEC3Record(owner, DClass.IN, 60, NSEC3Record.SHA1_DIGEST_ID, 0, 0, new byte[0],
          next, types.stream().mapToInt(Integer::intValue).toArray())));
    }
    return signAll();
  }

  private static final base32 HEX32 = new base32(base32.Alphabet.BASE32HEX, false, true);

  /** The NSEC3 owner label of {@code name}: base32hex of its hash, lower case. */
  private String hashLabel(Name name) throws Exception {
    return HEX32.toString(nsec3Param.hashName(name));
  }

  private SignedZoneServer signAll() throws Exception {
    Instant now = Instant.now();
    List<RRset> sets = new ArrayList<>(nsec3.values());
    names.values().forEach(node -> sets.addAll(node.values()));
    for (RRset set : sets) {
      Instant[] w = windows.getOrDefault(key(set.getName(), set.getType()),
          new Instant[] {now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(7))});
      set.addRR(DNSSEC.sign(set, dnskey, keys.getPrivate(), w[0], w[1]));
    }
    signed = true;
    return this;
  }

  /** Replaces {@code name}'s A record after signing, keeping the old signature: a forgery. */
  public void alterA(String name, String address) throws IOException {
    Name n = TestAuthServer.name(name);
    RRset old = names.get(n).get(Type.A);
    RRset forged = new RRset(new ARecord(n, DClass.IN, TTL, InetAddress.getByName(address)));
    for (RRSIGRecord sig : old.sigs()) {
      forged.addRR(sig);
    }
    names.get(n).put(Type.A, forged);
  }

  /**
   * Puts {@code count} signatures that fail before the valid one on {@code name}'s {@code type}
   * RRset, after signing: copies of it naming the same key, each with one byte of the signature
   * changed, as a KeyTrap zone makes a validator try them all.
   */
  public void prependFailingSignatures(String name, int type, int count) {
    Name n = TestAuthServer.name(name);
    RRset old = names.get(n).get(type);
    RRSIGRecord good = old.sigs().get(0);
    RRset loaded = new RRset();
    for (Record r : old.rrs(false)) {
      loaded.addRR(r);
    }
    for (int i = 0; i < count; i++) {
      byte[] sig = good.getSignature().clone();
      sig[i % sig.length] ^= (byte) (1 + i / sig.length);
      loaded.addRR(new RRSIGRecord(n, DClass.IN, good.getTTL(), good.getTypeCovered(), good.getAlgorithm(),
          good.getOrigTTL(), good.getExpire(), good.getTimeSigned(), good.getFootprint(), good.getSigner(), sig));
    }
    loaded.addRR(good);
    names.get(n).put(type, loaded);
  }

  /** The DS of the zone's key: the trust anchor that makes this zone secure. */
  public DSRecord ds() {
    return new DSRecord(zone, DClass.IN, TTL, DNSSEC.Digest.SHA256, dnskey);
  }

  /** Writes {@link #ds()} in zone-file syntax to {@code dir}/anchor.key and returns that path. */
  public Path writeAnchor(Path dir) throws IOException {
    return Files.writeString(dir.resolve("anchor.key"), ds() + "\n");
  }

  /** "127.0.0.1:port", as shoal's config takes it. */
  public String hostPort() {
    return "127.0.0.1:" + udp.getLocalPort();
  }

  /** Queries received for {@code name} and {@code type}. */
  public int queries(String name, int type) {
    AtomicInteger c = counts.get(key(TestAuthServer.name(name), type));
    return c == null ? 0 : c.get();
  }

  /** Queries received, all names and types. */
  public int queries() {
    return total.get();
  }

  private static String key(Name n, int type) {
    return n.toString().toLowerCase() + "/" + Type.string(type);
  }

  private void serve() {
    byte[] buf = new byte[65535];
    while (!udp.isClosed()) {
      DatagramPacket p = new DatagramPacket(buf, buf.length);
      try {
        udp.receive(p);
        Message q = new Message(java.util.Arrays.copyOf(p.getData(), p.getLength()));
        byte[] reply = answer(q).toWire(65535);
        udp.send(new DatagramPacket(reply, reply.length, p.getSocketAddress()));
      } catch (SocketException e) {
        return;
      } catch (Exception e) {
        // A query we cannot read goes unanswered, as with any server.
      }
    }
  }

  Message answer(Message query) throws Exception {
    Record q = query.getQuestion();
    counts.computeIfAbsent(key(q.getName(), q.getType()), k -> new AtomicInteger()).incrementAndGet();
    total.incrementAndGet();
    boolean dnssecOk = query.getOPT() != null && (query.getOPT().getFlags() & ExtendedFlags.DO) != 0;
    Message r = new Message(query.getHeader().getID());
    r.getHeader().setFlag(Flags.QR);
    r.getHeader().setFlag(Flags.AA);
    if (query.getHeader().getFlag(Flags.RD)) {
      r.getHeader().setFlag(Flags.RD);
    }
    if (query.getHeader().getFlag(Flags.CD)) {
      r.getHeader().setFlag(Flags.CD);
    }
    r.addRecord(q, Section.QUESTION);
    if (query.getOPT() != null) {
      r.addRecord(new OPTRecord(1232, 0, 0, dnssecOk ? ExtendedFlags.DO : 0), Section.ADDITIONAL);
    }
    Name qname = q.getName();
    if (!signed || !qname.subdomain(zone)) {
      r.getHeader().setRcode(Rcode.REFUSED);
      return r;
    }
    Map<Integer, RRset> node = names.get(qname);
    Map<Integer, RRset> apex = names.get(zone);
    if (node == null) {
      r.getHeader().setRcode(Rcode.NXDOMAIN);
      add(r, apex.get(Type.SOA), Section.AUTHORITY, dnssecOk);
      if (dnssecOk && !nsec3.isEmpty()) {
        // Closest encloser proof: its own NSEC3, the one covering the next closer name, and the
        // one covering the wildcard at the encloser.
        Name encloser = new Name(qname, 1);
        Name nextCloser = qname;
        while (!names.containsKey(encloser)) {
          nextCloser = encloser;
          encloser = new Name(encloser, 1);
        }
        List<RRset> proof = new ArrayList<>(List.of(nsec3.get(new Name(hashLabel(encloser), zone)),
            nsec3Covering(nextCloser), nsec3Covering(Name.fromConstantString("*." + encloser))));
        for (int i = 0; i < proof.size(); i++) {
          if (proof.subList(0, i).stream().noneMatch(proof.get(i)::equals)) {
            add(r, proof.get(i), Section.AUTHORITY, true);
          }
        }
      } else if (dnssecOk) {
        // The NSEC covering the name, and the one covering the wildcard at its closest encloser.
        RRset covering = covering(qname);
        add(r, covering, Section.AUTHORITY, true);
        Name encloser = qname;
        while (!names.containsKey(encloser)) {
          encloser = new Name(encloser, 1);
        }
        RRset wildcard = covering(Name.fromConstantString("*." + encloser));
        if (!wildcard.getName().equals(covering.getName())) {
          add(r, wildcard, Section.AUTHORITY, true);
        }
      }
    } else if (node.containsKey(q.getType())) {
      add(r, node.get(q.getType()), Section.ANSWER, dnssecOk);
    } else {
      add(r, apex.get(Type.SOA), Section.AUTHORITY, dnssecOk);
      if (dnssecOk) {
        add(r, nsec3.isEmpty() ? node.get(Type.NSEC) : nsec3.get(new Name(hashLabel(qname), zone)), Section.AUTHORITY, true);
      }
    }
    return r;
  }

  /** The NSEC3 RRset whose range covers {@code name}'s hash (the chain wraps). */
  private RRset nsec3Covering(Name name) throws Exception {
    Name hashed = new Name(hashLabel(name), zone);
    Map.Entry<Name, RRset> before = nsec3.lowerEntry(hashed);
    return (before != null ? before : nsec3.lastEntry()).getValue();
  }

  /** The NSEC RRset of the last owner before {@code name} in canonical order (the chain wraps). */
  private RRset covering(Name name) {
    Map.Entry<Name, Map<Integer, RRset>> before = names.lowerEntry(name);
    return (before != null ? before : names.lastEntry()).getValue().get(Type.NSEC);
  }

  private static void add(Message r, RRset set, int section, boolean withSignatures) {
    for (Record rec : set.rrs(false)) {
      r.addRecord(rec, section);
    }
    if (withSignatures) {
      for (RRSIGRecord sig : set.sigs()) {
        r.addRecord(sig, section);
      }
    }
  }

  @Override
  public void close() {
    udp.close();
  }
}

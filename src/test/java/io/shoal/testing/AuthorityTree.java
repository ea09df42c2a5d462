package io.shoal.testing;

import io.shoal.study.host.StudyException;
import io.shoal.study.server.KnotdZones;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.xbill.DNS.DSRecord;

/**
 * A DNS tree from the root down, on loopback: one knotd per authority, each on port 53 of its own
 * address in 127.53.B.0/24 (B picked per tree, so two trees never share an address), with a root
 * hints file and a root trust anchor (DS) file that a recursive resolver starts from.
 *
 * <p>The tree (every name below is fixed; only the addresses depend on B):
 * <ul>
 *   <li>{@code .} (NSEC, .1; its server {@code a.root-servers.}), {@code test.} (NSEC3, .2),
 *       {@code example.} (NSEC, .3), each signed child's DS in its parent.
 *   <li>{@code sec.test.} (NSEC, .10) and {@code nsec3.example.} (NSEC3, .11): addresses, MX, TXT,
 *       wildcards under {@code wild.}, empty non-terminals above {@code deep.ent.sec.test.} and
 *       {@code a.b.ent.nsec3.example.}, and CNAMEs into each other and into the unsigned zones.
 *   <li>{@code plain.test.} and {@code open.example.} (unsigned, .12): insecure delegations proven
 *       by the parent's NSEC3 and NSEC records.
 *   <li>{@code glueless.test.} (NSEC, .13), served by {@code gl.hosting.example.}, whose address
 *       only {@code hosting.example.} (NSEC3, .14) knows: a glueless delegation across TLDs.
 *   <li>{@code broken.test.} (NSEC, .15): its DS in {@code test.} matches none of its keys (bogus).
 *   <li>{@code lame.test.} (NSEC3): {@code ns1.lame.test.} (.16) answers REFUSED (it does not serve
 *       the zone), {@code ns2.lame.test.} (.17) serves it.
 *   <li>{@code slow.test.} (NSEC): its only address (.19) is a relay that holds each answer
 *       {@link #SLOW_DELAY_MS} ms before passing it on from the knotd behind it (.18; UDP only).
 *   <li>{@code loop.test.} (unsigned, .20) refers {@code sub.loop.test.} to .21, which serves a
 *       stale copy of {@code test.} and refers every name under it back up to {@code loop.test.} at
 *       .20: a referral loop.
 *   <li>{@code cycle1.test.} and {@code cycle2.test.}: glueless, each served by a name in the other.
 *   <li>{@code nxns.test.}: a referral to 100 NS names under {@code void.example.}, which does not
 *       exist (the NXNS attack's shape).
 * </ul>
 * All knotd instances start at once and the DS records go into the parents after the children
 * signed themselves; everything started is stopped by its PID in {@link #close}.
 */
public final class AuthorityTree implements AutoCloseable {
  /** How long the slow server holds each answer. */
  public static final long SLOW_DELAY_MS = 200;
  /** The first two octets of every tree's addresses. */
  private static final String PREFIX = "127.53.";
  private static final Duration SETUP_LIMIT = Duration.ofSeconds(90);
  /** Third octets in use by trees of this JVM. */
  private static final Set<Integer> claimed = ConcurrentHashMap.newKeySet();
  /** The last octet of every address the tree uses. */
  private static final int[] HOSTS = {1, 2, 3, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};

  private final int block;
  private final Path dir;
  private final Map<String, KnotdZones> servers = new LinkedHashMap<>();
  private UdpRelay slowRelay;
  private Path rootHints;
  private Path trustAnchor;

  private AuthorityTree(int block, Path dir) {
    this.block = block;
    this.dir = dir;
  }

  /** One authority: a label for counts and logs, its address's last octet, and the zones it serves. */
  private record Authority(String label, int host, List<Zone> zones) {}

  private record Zone(String apex, KnotdZones.Signing signing, String text) {}

  /** A delegation whose DS the parent gets once the child signed itself. */
  private record SignedDelegation(String parentServer, String parent, String childServer, String child,
      boolean mismatch) {}

  /** Builds and starts the tree in {@code dir} (which it creates); fails with the knotd log after a deadline. */
  public static AuthorityTree start(Path dir) throws IOException, StudyException, InterruptedException {
    Path absolute = dir.toAbsolutePath();
    Files.createDirectories(absolute);
    AuthorityTree tree = new AuthorityTree(claimBlock(), absolute);
    try {
      tree.build();
      return tree;
    } catch (IOException | StudyException | InterruptedException | RuntimeException e) {
      tree.close();
      throw e;
    }
  }

  /**
   * A third octet no tree of this JVM holds and whose port 53 is free on every address the tree
   * uses; started from this process's id, so test runs in two JVMs start apart.
   */
  private static int claimBlock() throws IOException {
    int first = (int) (ProcessHandle.current().pid() % 250);
    for (int i = 0; i < 250; i++) {
      int b = 1 + (first + i) % 250;
      if (!claimed.add(b)) {
        continue;
      }
      if (free(b)) {
        return b;
      }
      claimed.remove(b);
    }
    throw new IOException("no block 127.53.B.0/24 has port 53 free on all of its tree's addresses");
  }

  private static boolean free(int block) {
    for (int h : HOSTS) {
      try {
        InetAddress a = InetAddress.getByName(PREFIX + block + "." + h);
        try (DatagramSocket udp = new DatagramSocket(new InetSocketAddress(a, 53));
            ServerSocket tcp = new ServerSocket()) {
          tcp.setReuseAddress(true);
          tcp.bind(new InetSocketAddress(a, 53));
        }
      } catch (IOException taken) {
        return false;
      }
    }
    return true;
  }

  /** The address of host {@code host} (last octet) in this tree. */
  public String ip(int host) {
    return PREFIX + block + "." + host;
  }

  private void build() throws IOException, StudyException, InterruptedException {
    long deadline = System.nanoTime() + SETUP_LIMIT.toNanos();
    List<Authority> authorities = authorities();
    ExecutorService pool = Executors.newFixedThreadPool(authorities.size(), r -> {
      Thread t = new Thread(r, "authority-tree-start");
      t.setDaemon(true);
      return t;
    });
    try {
      Map<String, Future<KnotdZones>> starting = new LinkedHashMap<>();
      for (Authority a : authorities) {
        starting.put(a.label(), pool.submit(() -> startAuthority(a)));
      }
      StudyException failure = null;
      for (Map.Entry<String, Future<KnotdZones>> s : starting.entrySet()) {
        try {
          servers.put(s.getKey(), s.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
        } catch (ExecutionException | TimeoutException e) {
          if (failure == null) {
            failure = new StudyException("authority " + s.getKey() + " did not start: "
                + (e.getCause() == null ? e : e.getCause()).toString(), e);
          }
        }
      }
      if (failure != null) {
        throw failure;
      }
      slowRelay = new UdpRelay(new InetSocketAddress(ip(19), 53), SLOW_DELAY_MS);
      slowRelay.target(servers.get("slow").address());
      placeDs(pool, deadline);
      StringBuilder anchor = new StringBuilder();
      for (DSRecord ds : servers.get("root").ds(".")) {
        anchor.append(". 3600 IN DS ").append(ds.rdataToString()).append('\n');
      }
      trustAnchor = Files.writeString(dir.resolve("root.ds"), anchor.toString());
      rootHints = Files.writeString(dir.resolve("root.hints"),
          ".                3600000 IN NS a.root-servers.\n"
              + "a.root-servers.  3600000 IN A  " + ip(1) + "\n");
    } finally {
      pool.shutdownNow();
    }
  }

  private KnotdZones startAuthority(Authority a) throws IOException, StudyException {
    KnotdZones.Builder b = KnotdZones.builder().listen(new InetSocketAddress(ip(a.host()), 53));
    for (Zone z : a.zones()) {
      b.zoneFile(z.apex(), z.signing(), z.text());
    }
    Path d = dir.resolve(a.label());
    Files.createDirectories(d);
    return b.start(d);
  }

  /** Reads each signed child's DS, then writes them into its parent (one knotc transaction per parent). */
  private void placeDs(ExecutorService pool, long deadline) throws IOException, StudyException, InterruptedException {
    List<SignedDelegation> delegations = List.of(
        new SignedDelegation("root", ".", "test", "test.", false),
        new SignedDelegation("root", ".", "example", "example.", false),
        new SignedDelegation("test", "test.", "sec", "sec.test.", false),
        new SignedDelegation("test", "test.", "glueless", "glueless.test.", false),
        new SignedDelegation("test", "test.", "broken", "broken.test.", true),
        new SignedDelegation("test", "test.", "lame", "lame.test.", false),
        new SignedDelegation("test", "test.", "slow", "slow.test.", false),
        new SignedDelegation("example", "example.", "nsec3", "nsec3.example.", false),
        new SignedDelegation("example", "example.", "hosting", "hosting.example.", false));
    Map<String, List<String>> perParent = new LinkedHashMap<>();
    Map<String, String> parentZone = new LinkedHashMap<>();
    for (SignedDelegation d : delegations) {
      for (DSRecord ds : servers.get(d.childServer()).ds(d.child())) {
        String rdata = ds.rdataToString();
        if (d.mismatch()) {
          // the same key tag and algorithm, one digest digit changed: a DS that matches no key
          char last = rdata.charAt(rdata.length() - 1);
          rdata = rdata.substring(0, rdata.length() - 1) + (last == '0' ? '1' : '0');
        }
        perParent.computeIfAbsent(d.parentServer(), k -> new ArrayList<>()).add(d.child() + " 300 DS " + rdata);
      }
      parentZone.put(d.parentServer(), d.parent());
    }
    List<Future<Void>> adding = new ArrayList<>();
    for (Map.Entry<String, List<String>> p : perParent.entrySet()) {
      adding.add(pool.submit(() -> {
        servers.get(p.getKey()).add(parentZone.get(p.getKey()), p.getValue());
        return null;
      }));
    }
    for (Future<Void> f : adding) {
      try {
        f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (ExecutionException | TimeoutException e) {
        throw new StudyException("placing DS records in the parents failed: "
            + (e.getCause() == null ? e : e.getCause()), e);
      }
    }
  }

  /** A zone file: SOA and apex NS from {@code ns} (absolute names), then {@code lines} relative to the apex. */
  private static String zone(String apex, List<String> ns, String... lines) {
    // TTLs (and the negative TTL, the SOA minimum) longer than a cold pass can take on one loaded
    // core: a warm pass asked after them must find everything still cached, however slow the host.
    List<String> all = new ArrayList<>(List.of("$ORIGIN " + apex, "$TTL 3600",
        "@ SOA " + ns.get(0) + " hostmaster" + ("." .equals(apex) ? "." : "." + apex) + " 1 3600 900 604800 3600"));
    for (String n : ns) {
      all.add("@ NS " + n);
    }
    all.addAll(List.of(lines));
    all.add("");
    return String.join("\n", all);
  }

  private List<Authority> authorities() {
    KnotdZones.Signing nsec = KnotdZones.Signing.NSEC;
    KnotdZones.Signing nsec3 = KnotdZones.Signing.NSEC3;
    KnotdZones.Signing off = KnotdZones.Signing.OFF;
    List<String> nxns = new ArrayList<>();
    for (int i = 1; i <= 100; i++) {
      nxns.add("nxns NS ns" + i + ".void.example.");
    }
    List<String> test = new ArrayList<>(List.of(
        "ns A " + ip(2),
        "sec NS ns.sec", "ns.sec A " + ip(10),
        "plain NS ns.plain", "ns.plain A " + ip(12),
        "glueless NS gl.hosting.example.",
        "broken NS ns.broken", "ns.broken A " + ip(15),
        "lame NS ns1.lame", "lame NS ns2.lame", "ns1.lame A " + ip(16), "ns2.lame A " + ip(17),
        "slow NS ns.slow", "ns.slow A " + ip(19),
        "loop NS ns.loop", "ns.loop A " + ip(20),
        "cycle1 NS ns.cycle2.test.",
        "cycle2 NS ns.cycle1.test."));
    test.addAll(nxns);
    return List.of(
        new Authority("root", 1, List.of(new Zone(".", nsec, zone(".", List.of("a.root-servers."),
            "a.root-servers. A " + ip(1),
            "test. NS ns.test.", "ns.test. A " + ip(2),
            "example. NS ns.example.", "ns.example. A " + ip(3))))),
        new Authority("test", 2, List.of(new Zone("test.", nsec3, zone("test.", List.of("ns.test."),
            test.toArray(String[]::new))))),
        new Authority("example", 3, List.of(new Zone("example.", nsec, zone("example.", List.of("ns.example."),
            "ns A " + ip(3),
            "nsec3 NS ns.nsec3", "ns.nsec3 A " + ip(11),
            "open NS ns.open", "ns.open A " + ip(12),
            "hosting NS ns.hosting", "ns.hosting A " + ip(14))))),
        new Authority("sec", 10, List.of(new Zone("sec.test.", nsec, zone("sec.test.", List.of("ns.sec.test."),
            "ns A " + ip(10),
            "www A 192.0.2.1", "www AAAA 2001:db8::1", "www TXT \"signed with NSEC\"",
            "@ MX 10 www",
            "alias CNAME www.nsec3.example.",
            "dangling CNAME nothere.nsec3.example.",
            "toplain CNAME www.plain.test.",
            "*.wild A 192.0.2.2", "*.wild TXT \"wildcard\"",
            "deep.ent A 192.0.2.3")))),
        new Authority("nsec3", 11, List.of(new Zone("nsec3.example.", nsec3,
            zone("nsec3.example.", List.of("ns.nsec3.example."),
                "ns A " + ip(11),
                "www A 198.51.100.1", "www AAAA 2001:db8::2", "www TXT \"signed with NSEC3\"",
                "back CNAME www.sec.test.",
                "chain CNAME alias.sec.test.",
                "*.wild A 198.51.100.2",
                "a.b.ent A 198.51.100.3")))),
        new Authority("plain", 12, List.of(
            new Zone("plain.test.", off, zone("plain.test.", List.of("ns.plain.test."),
                "ns A " + ip(12),
                "www A 203.0.113.1", "www TXT \"unsigned\"",
                "tosec CNAME www.sec.test.",
                "*.wild A 203.0.113.2",
                "x.ent A 203.0.113.3")),
            new Zone("open.example.", off, zone("open.example.", List.of("ns.open.example."),
                "ns A " + ip(12),
                "www A 203.0.113.10",
                "tonsec3 CNAME www.nsec3.example.")))),
        new Authority("glueless", 13, List.of(new Zone("glueless.test.", nsec,
            zone("glueless.test.", List.of("gl.hosting.example."),
                "www A 192.0.2.20", "www TXT \"glueless\"")))),
        new Authority("hosting", 14, List.of(new Zone("hosting.example.", nsec3,
            zone("hosting.example.", List.of("ns.hosting.example."),
                "ns A " + ip(14),
                "gl A " + ip(13),
                "www A 198.51.100.20")))),
        new Authority("broken", 15, List.of(new Zone("broken.test.", nsec, zone("broken.test.", List.of("ns.broken.test."),
            "ns A " + ip(15),
            "www A 192.0.2.30")))),
        // serves a zone nobody delegates to, so it answers REFUSED for lame.test.
        new Authority("lame-refused", 16, List.of(new Zone("elsewhere.example.", off,
            zone("elsewhere.example.", List.of("ns.elsewhere.example."), "ns A " + ip(16))))),
        new Authority("lame", 17, List.of(new Zone("lame.test.", nsec3,
            zone("lame.test.", List.of("ns1.lame.test.", "ns2.lame.test."),
                "ns1 A " + ip(16), "ns2 A " + ip(17),
                "www A 192.0.2.40")))),
        new Authority("slow", 18, List.of(new Zone("slow.test.", nsec, zone("slow.test.", List.of("ns.slow.test."),
            "ns A " + ip(19),
            "www A 192.0.2.50", "www TXT \"slow\"")))),
        new Authority("loop-a", 20, List.of(new Zone("loop.test.", off, zone("loop.test.", List.of("ns.loop.test."),
            "ns A " + ip(20),
            "www A 192.0.2.60",
            "sub NS ns.sub", "ns.sub A " + ip(21))))),
        // a stale copy of test.: asked for anything under sub.loop.test. it refers back up to loop.test.
        new Authority("loop-b", 21, List.of(new Zone("test.", off, zone("test.", List.of("ns.test."),
            "ns A " + ip(21),
            "loop NS ns.loop", "ns.loop A " + ip(20))))));
  }

  /** The root hints file (zone-file syntax: the root's NS and its address). */
  public Path rootHints() {
    return rootHints;
  }

  /** The root's DS records in zone-file syntax, a trust anchor file for Unbound and shoal alike. */
  public Path trustAnchor() {
    return trustAnchor;
  }

  /** The third octet of this tree's addresses (127.53.B.0/24). */
  public int block() {
    return block;
  }

  /** Queries each authority has received since it started (mod-stats), by label. */
  public Map<String, Long> queryCounts() throws IOException, StudyException {
    Map<String, Long> out = new LinkedHashMap<>();
    for (Map.Entry<String, KnotdZones> s : servers.entrySet()) {
      out.put(s.getKey(), s.getValue().queryCount());
    }
    return out;
  }

  /** Queries all authorities together have received since they started. */
  public long queryCount() throws IOException, StudyException {
    return queryCounts().values().stream().mapToLong(Long::longValue).sum();
  }

  /** The knotd serving authority {@code label} (e.g. "root", "sec", "lame-refused"). */
  public KnotdZones server(String label) {
    return servers.get(label);
  }

  /** Datagrams that reached the slow server's relay. */
  public int slowRelayed() {
    return slowRelay == null ? 0 : slowRelay.relayed();
  }

  /** Where the tree's files and knotd logs are. */
  public Path dir() {
    return dir;
  }

  /** Stops the relay and every knotd (each by its PID), and frees the address block. */
  @Override
  public void close() {
    if (slowRelay != null) {
      slowRelay.close();
    }
    List<Thread> stopping = new ArrayList<>();
    for (KnotdZones k : servers.values()) {
      Thread t = new Thread(k::close, "authority-tree-stop");
      t.start();
      stopping.add(t);
    }
    for (Thread t : stopping) {
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    claimed.remove(block);
  }
}

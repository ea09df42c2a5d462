package io.shoal.study.server;

import io.shoal.study.host.StudyException;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.xbill.DNS.DSRecord;

/**
 * The DNS tree the recursion study resolves in, on loopback: one knotd per authority, each on port
 * 53 of its own address in 127.54.B.0/24 (the test suite's trees take 127.53.0.0/16): the root
 * (.1, server {@code a.root-servers.}), the TLD {@code example.} (.2), and {@code zones} signed
 * zones {@code z1.example.} ... (.10 on), each with {@code namesPerZone} address records
 * {@code h0} ... and no wildcard, so every name a resolver is asked exists and must be fetched.
 * Every zone is signed by knotd (ECDSA P-256, NSEC), each child's DS is in its parent, and the
 * root's DS is the trust anchor. TTLs and the negative TTL are an hour, longer than the study.
 */
public final class RecursionTree implements AutoCloseable {
  /** The first two octets of the tree's addresses. */
  static final String PREFIX = "127.54.";
  /** The TLD every zone is under. */
  public static final String TLD = "example.";
  private static final Duration SETUP_LIMIT = Duration.ofSeconds(180);

  private final int block;
  private final Path dir;
  private final int zones;
  private final int namesPerZone;
  private final Map<String, KnotdZones> servers = new LinkedHashMap<>();
  private Path rootHints;
  private Path trustAnchor;

  private RecursionTree(int block, Path dir, int zones, int namesPerZone) {
    this.block = block;
    this.dir = dir;
    this.zones = zones;
    this.namesPerZone = namesPerZone;
  }

  /**
   * Builds and starts the tree in {@code dir}: {@code zones} zones of {@code namesPerZone} names
   * each; fails with the knotd log after a deadline, stopping what it started.
   */
  public static RecursionTree start(Path dir, int zones, int namesPerZone)
      throws IOException, StudyException, InterruptedException {
    if (zones < 1 || zones > 100 || namesPerZone < 1) {
      throw new IllegalArgumentException("1 to 100 zones of at least one name each; got " + zones + " x " + namesPerZone);
    }
    Path absolute = dir.toAbsolutePath();
    Files.createDirectories(absolute);
    RecursionTree tree = new RecursionTree(freeBlock(zones), absolute, zones, namesPerZone);
    try {
      tree.build();
      return tree;
    } catch (IOException | StudyException | InterruptedException | RuntimeException e) {
      tree.close();
      throw e;
    }
  }

  /** The first third octet whose port 53 is free on every address a tree of {@code zones} zones uses. */
  private static int freeBlock(int zones) throws IOException {
    for (int b = 1; b <= 250; b++) {
      if (free(b, zones)) {
        return b;
      }
    }
    throw new IOException("no block " + PREFIX + "B.0/24 has port 53 free on all of the tree's addresses");
  }

  private static boolean free(int block, int zones) {
    List<Integer> hosts = new ArrayList<>(List.of(1, 2));
    for (int z = 1; z <= zones; z++) {
      hosts.add(9 + z);
    }
    for (int h : hosts) {
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

  /** The apex of zone {@code z} (1-based), e.g. {@code z1.example.}. */
  public static String zone(int z) {
    return "z" + z + "." + TLD;
  }

  /** The {@code i}-th name of zone {@code z}: {@code h<i>.z<z>.example.}, which exists for i below namesPerZone. */
  public static String name(int z, int i) {
    return "h" + i + "." + zone(z);
  }

  private void build() throws IOException, StudyException, InterruptedException {
    long deadline = System.nanoTime() + SETUP_LIMIT.toNanos();
    Map<String, List<String>> text = new LinkedHashMap<>();
    Map<String, Integer> host = new LinkedHashMap<>();
    Map<String, String> apex = new LinkedHashMap<>();
    List<String> root = new ArrayList<>(List.of("a.root-servers. A " + ip(1), TLD + " NS ns." + TLD,
        "ns." + TLD + " A " + ip(2)));
    add("root", ".", 1, zoneFile(".", "a.root-servers.", root), text, host, apex);
    List<String> tld = new ArrayList<>(List.of("ns A " + ip(2)));
    for (int z = 1; z <= zones; z++) {
      tld.add("z" + z + " NS ns.z" + z);
      tld.add("ns.z" + z + " A " + ip(9 + z));
    }
    add("tld", TLD, 2, zoneFile(TLD, "ns." + TLD, tld), text, host, apex);
    for (int z = 1; z <= zones; z++) {
      List<String> names = new ArrayList<>(List.of("ns A " + ip(9 + z)));
      for (int i = 0; i < namesPerZone; i++) {
        names.add("h" + i + " A 192.0." + (2 + i / 250 % 100) + "." + (1 + i % 250));
      }
      add("z" + z, zone(z), 9 + z, zoneFile(zone(z), "ns." + zone(z), names), text, host, apex);
    }
    ExecutorService pool = Executors.newFixedThreadPool(text.size(), r -> {
      Thread t = new Thread(r, "recursion-tree-start");
      t.setDaemon(true);
      return t;
    });
    try {
      Map<String, Future<KnotdZones>> starting = new LinkedHashMap<>();
      for (String label : text.keySet()) {
        Path d = dir.resolve(label);
        Files.createDirectories(d);
        starting.put(label, pool.submit(() -> KnotdZones.builder()
            .listen(new InetSocketAddress(ip(host.get(label)), 53))
            .zoneFile(apex.get(label), KnotdZones.Signing.NSEC, String.join("\n", text.get(label)))
            .start(d)));
      }
      for (Map.Entry<String, Future<KnotdZones>> s : starting.entrySet()) {
        servers.put(s.getKey(), await(s.getValue(), deadline, "authority " + s.getKey() + " did not start"));
      }
      List<Future<Void>> placing = new ArrayList<>();
      placing.add(pool.submit(() -> placeDs("root", ".", List.of(TLD))));
      List<String> children = new ArrayList<>();
      for (int z = 1; z <= zones; z++) {
        children.add(zone(z));
      }
      placing.add(pool.submit(() -> placeDs("tld", TLD, children)));
      for (Future<Void> f : placing) {
        await(f, deadline, "placing DS records in the parents failed");
      }
    } finally {
      pool.shutdownNow();
    }
    StringBuilder anchor = new StringBuilder();
    for (DSRecord ds : servers.get("root").ds(".")) {
      anchor.append(". 3600 IN DS ").append(ds.rdataToString()).append('\n');
    }
    trustAnchor = Files.writeString(dir.resolve("root.ds"), anchor.toString());
    rootHints = Files.writeString(dir.resolve("root.hints"),
        ".                3600000 IN NS a.root-servers.\n" + "a.root-servers.  3600000 IN A  " + ip(1) + "\n");
  }

  private static void add(String label, String zoneApex, int hostOctet, List<String> file,
      Map<String, List<String>> text, Map<String, Integer> host, Map<String, String> apex) {
    text.put(label, file);
    host.put(label, hostOctet);
    apex.put(label, zoneApex);
  }

  private static <T> T await(Future<T> f, long deadline, String what) throws StudyException, InterruptedException {
    try {
      return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new StudyException(what + ": " + (e.getCause() == null ? e : e.getCause()), e);
    }
  }

  /** Writes the DS of each of {@code children} (each signed by its own knotd) into {@code parent}. */
  private Void placeDs(String parentLabel, String parent, List<String> children) throws IOException, StudyException {
    List<String> records = new ArrayList<>();
    for (String child : children) {
      String label = child.equals(TLD) ? "tld" : child.substring(0, child.indexOf('.'));
      for (DSRecord ds : servers.get(label).ds(child)) {
        records.add(child + " 3600 DS " + ds.rdataToString());
      }
    }
    servers.get(parentLabel).add(parent, records);
    return null;
  }

  /** A zone file: SOA and NS from {@code ns}, TTLs and negative TTL of an hour, then {@code lines}. */
  static List<String> zoneFile(String apex, String ns, List<String> lines) {
    List<String> all = new ArrayList<>(List.of("$ORIGIN " + apex, "$TTL 3600",
        "@ SOA " + ns + " hostmaster" + (".".equals(apex) ? "." : "." + apex) + " 1 3600 900 604800 3600",
        "@ NS " + ns));
    all.addAll(lines);
    all.add("");
    return all;
  }

  /** The root hints file (zone-file syntax: the root's NS and its address). */
  public Path rootHints() {
    return rootHints;
  }

  /** The root's DS records in zone-file syntax: the trust anchor file of every member. */
  public Path trustAnchor() {
    return trustAnchor;
  }

  /** How many signed zones hold the names. */
  public int zones() {
    return zones;
  }

  /** How many names each zone holds. */
  public int namesPerZone() {
    return namesPerZone;
  }

  /** Where the root server is, for the summary. */
  public String describe() {
    return String.format(java.util.Locale.ROOT, "%d knotd instances on %s.0/24 port 53: the root, %s and %d signed "
        + "zones of %,d names each (ECDSA P-256, NSEC, DS in the parents)", servers.size(), PREFIX + block, TLD, zones,
        namesPerZone);
  }

  /** Queries every authority of the tree has received since it started (mod-stats), summed; each by label to {@code audit}. */
  public long queryCount(Path audit) throws IOException, StudyException {
    long total = 0;
    StringBuilder text = new StringBuilder("# queries received by each authority (knotc stats, mod-stats)\n");
    for (Map.Entry<String, KnotdZones> s : servers.entrySet()) {
      long n = s.getValue().queryCount();
      text.append(s.getKey()).append(' ').append(n).append('\n');
      total += n;
    }
    Files.writeString(audit, text.append("total ").append(total).append('\n'));
    return total;
  }

  /** Stops every knotd, each by its PID. */
  @Override
  public void close() {
    List<Thread> stopping = new ArrayList<>();
    for (KnotdZones k : servers.values()) {
      Thread t = new Thread(k::close, "recursion-tree-stop");
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
  }
}

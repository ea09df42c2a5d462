package io.shoal.study.server;

import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Recipe;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Knot Resolver (kresd) forwarding to knotd, with kres-cache-gc beside it as an operator runs it.
 * Its LMDB cache is sized in bytes, about {@value #BYTES_PER_ENTRY} B per answer for this zone.
 * When that cache is full kresd stops storing new answers until the garbage collector trims it,
 * and the collector's thresholds are coarse for caches of a few hundred KiB: under churn its
 * row shows what that costs.
 */
final class KresdPeer extends ServerUnderTest {
  static final long BYTES_PER_ENTRY = 98;
  private static final long PAGE = 4096;
  private static final Pattern STAT = Pattern.compile("\\['([a-z0-9_.]+)'\\]\\s*=\\s*([0-9.e+-]+)");
  private static final long CONTROL_LIMIT_MS = 10_000;

  private Process collector;

  KresdPeer(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p, Prerequisites.Tools t)
      throws IOException {
    super(m, r, dir, upstream, p, t);
  }

  @Override
  public int workers() {
    return 1; // one kresd process; more would need several processes sharing the port
  }

  private long cacheBytes() {
    long wanted = setting("cache_size", recipe.maxEntries() * BYTES_PER_ENTRY);
    return (wanted + PAGE - 1) / PAGE * PAGE;
  }

  private Path control() {
    return dir.resolve("control.sock");
  }

  private Path cacheDir() {
    return dir.resolve("cache");
  }

  @Override
  protected void writeConfig() throws IOException {
    Files.createDirectories(cacheDir());
    List<String> lines = new ArrayList<>(List.of(
        "net.ipv6 = false",
        "net.listen('127.0.0.1', " + port + ", { kind = 'dns' })",
        "net.listen('" + control() + "', nil, { kind = 'control' })",
        "modules.load('stats')",
        // the study zone is unsigned: no validation, as for the other members (a recursive member
        // validates from the tree's root DS instead)
        "trust_anchors.remove('.')",
        "cache.open(" + cacheBytes() + ", 'lmdb://" + cacheDir() + "')"));
    lines.addAll(recursive()
        // ALLOW_LOCAL: kresd ignores glue on loopback (the whole tree) without it; no RFC 8145
        // signalling query, as unbound runs with trust-anchor-signaling: no
        ? List.of("policy.add(policy.all(policy.FLAGS('ALLOW_LOCAL')))", "modules.unload('ta_signal_query')",
            "modules.load('hints > iterate')",
            "hints.root_file('" + member.config().getString(Member.ROOT_HINTS) + "')",
            "trust_anchors.add_file('" + member.config().getString(Member.UNBOUND_ANCHOR) + "', true)")
        : List.of("policy.add(policy.all(policy.FORWARD({'" + upstreamHost() + "@" + upstream.getPort() + "'})))"));
    lines.addAll(extraLines());
    lines.add("");
    Files.writeString(dir.resolve("kresd.conf"), String.join("\n", lines));
  }

  /** True if the member resolves from root hints (the recursion study's tree) instead of forwarding to knotd. */
  private boolean recursive() {
    return member.config().hasPath(Member.ROOT_HINTS);
  }

  @Override
  protected List<String> command() {
    return List.of(tools.path("kresd"), "-n", "-c", dir.resolve("kresd.conf").toString(), dir.toString());
  }

  @Override
  public void start() throws IOException, StudyException {
    super.start();
    if (flag("cache_gc", true)) {
      collector = processes.start(
          List.of(tools.path("kres-cache-gc"), "-c", cacheDir().toString(), "-d", "1000"),
          dir, dir.resolve("kres-cache-gc.log"), Map.of());
    }
  }

  @Override
  public List<Long> servingPids() {
    List<Long> pids = new ArrayList<>(super.servingPids());
    if (collector != null) {
      pids.add(collector.pid());
    }
    return pids;
  }

  @Override
  public String servingProcesses() {
    return !flag("cache_gc", true) ? "kresd" : "kresd + kres-cache-gc (the collector trims the cache the answers come from)";
  }

  @Override
  public int stop() {
    if (collector != null) {
      processes.stop(collector);
    }
    return super.stop();
  }

  @Override
  public CacheCounters counters(Path audit) throws StudyException, IOException {
    processes.note("# in-process: stats.list() on the kresd control socket " + control());
    String text = ask("stats.list()");
    Files.writeString(audit, text, StandardCharsets.UTF_8);
    Map<String, Double> stats = parseStats(text);
    long cached = value(stats, "answer.cached");
    long requests = value(stats, "request.udp") + value(stats, "request.tcp");
    return new CacheCounters(cached, requests - cached, null, null, null, null);
  }

  /** Reads {@code ['name'] = value} pairs from kresd's Lua table output. */
  static Map<String, Double> parseStats(String text) {
    Map<String, Double> out = new TreeMap<>();
    Matcher m = STAT.matcher(text);
    while (m.find()) {
      out.put(m.group(1), Double.parseDouble(m.group(2)));
    }
    return out;
  }

  private static long value(Map<String, Double> stats, String key) throws StudyException {
    Double v = stats.get(key);
    if (v == null) {
      throw new StudyException("kresd statistics have no " + key);
    }
    return Math.round(v);
  }

  /** Sends one Lua command on the control socket and reads the reply up to the next prompt. */
  private String ask(String command) throws StudyException {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(control()));
      ch.write(ByteBuffer.wrap((command + "\n").getBytes(StandardCharsets.UTF_8)));
      ch.configureBlocking(false);
      StringBuilder reply = new StringBuilder();
      ByteBuffer buf = ByteBuffer.allocate(8192);
      long deadline = System.currentTimeMillis() + CONTROL_LIMIT_MS;
      while (System.currentTimeMillis() < deadline) {
        buf.clear();
        int n = ch.read(buf);
        if (n < 0) {
          break;
        }
        if (n > 0) {
          reply.append(new String(buf.array(), 0, n, StandardCharsets.UTF_8));
          if (reply.indexOf("}") >= 0 && reply.toString().stripTrailing().endsWith(">")) {
            return reply.toString();
          }
        } else {
          Thread.sleep(20);
        }
      }
      throw new StudyException("kresd did not answer '" + command + "' on " + control() + "; got: " + reply);
    } catch (IOException e) {
      throw new StudyException("cannot talk to kresd on " + control() + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted while asking kresd for statistics", e);
    }
  }

  @Override
  public String setupNote() {
    return "kresd, 1 process, LMDB cache of " + cacheBytes() + " B (about " + recipe.maxEntries() + " answers at "
        + BYTES_PER_ENTRY + " B each), kres-cache-gc " + (flag("cache_gc", true) ? "running" : "off")
        + (recursive() ? ", recursive from the tree's root hints, validating from its root DS" : "")
        + "; cache_hits are answers flagged cached by its stats module";
  }
}

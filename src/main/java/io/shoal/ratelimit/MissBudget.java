package io.shoal.ratelimit;

import io.shoal.config.MissBudgetSettings;
import io.shoal.wire.CacheKey;
import java.net.InetAddress;
import java.util.function.LongSupplier;

/**
 * Admission of cache misses, the queries that cost an upstream exchange: each client prefix and
 * each zone may send {@code per_client} and {@code per_zone} misses a second upstream. A flood of
 * unique names (every one a miss) from one source is held to its client budget, and one spread
 * over many sources at one zone (the random-subdomain attack) to the zone's, as BIND's
 * fetches-per-zone and Unbound's ratelimit do; a miss over either is answered SERVFAIL at once by
 * the thread that read it, so the flood never reaches the workers, the upstream sockets or the
 * cache, and the hits of every other client keep the CPU. Hits never come here.
 *
 * <p>A miss over its client's budget is not counted against its zone: one noisy client cannot use
 * up a zone's budget beyond its own. And a zone over its budget still takes, from each client, a
 * slice of its budget, up to {@code per_zone} such misses a second in all: the budget split evenly
 * over the client prefixes that asked the zone past its budget in the second before (at least one
 * miss each; {@code per_zone / }{@value #FAIR_SLICES} in a zone's first second over), so a client
 * that asks the flooded zone gets its fair share of the upstream's answers, however many sources
 * the flood comes from, while they are held to about twice the budget. (A flood from more client
 * prefixes than {@code per_zone} takes the slices up; then every client waits for the next
 * second.) The zone of a name is its last {@code zone_labels} labels
 * (shoal forwards, so it does not know the zone cuts): {@code a1b2.victim.example} counts against
 * {@code victim.example} with the default 2.
 */
public final class MissBudget {
  /** No budgets. */
  public static final MissBudget OFF = new MissBudget(MissBudgetSettings.OFF, System::nanoTime);

  /** Which budget a miss was over, as shoal_miss_budget_exceeded_total{budget} labels. */
  public static final String CLIENT = "client";
  public static final String ZONE = "zone";

  private final MissBudgetSettings settings;
  private final PerSecondCounts clients;
  private final PerSecondCounts zones;
  /** Misses per client and zone, counted once the zone is over its budget. */
  private final PerSecondCounts slices;
  /** Misses per zone let through by a client's slice. */
  private final PerSecondCounts sliced;
  /** Client prefixes per zone that asked it past its budget: how many ways the next second's slices split. */
  private final PerSecondCounts slicedClients;
  /** A client's slice in a zone's first second over its budget, before its clients were counted. */
  private final int firstSlice;

  /** How many clients' slices a zone's budget is cut into before its clients are counted. */
  static final int FAIR_SLICES = 1024;

  public MissBudget(MissBudgetSettings settings) {
    this(settings, System::nanoTime);
  }

  MissBudget(MissBudgetSettings settings, LongSupplier nanoClock) {
    this.settings = settings;
    this.clients = new PerSecondCounts(settings.perClient() > 0 ? settings.tableSize() : 0, nanoClock);
    int zoneTable = settings.perZone() > 0 ? settings.tableSize() : 0;
    this.zones = new PerSecondCounts(zoneTable, nanoClock);
    this.slices = new PerSecondCounts(zoneTable, nanoClock);
    this.sliced = new PerSecondCounts(zoneTable, nanoClock);
    this.slicedClients = new PerSecondCounts(zoneTable, nanoClock);
    this.firstSlice = Math.max(1, settings.perZone() / FAIR_SLICES);
  }

  /** Whether any budget is set: when none is, no miss is ever over one. */
  public boolean enabled() {
    return settings.enabled();
  }

  /**
   * Counts a miss of {@code key} from {@code client}: null when it may go upstream, else the
   * budget it is over ({@link #CLIENT} or {@link #ZONE}). A miss of a name its cache evicted
   * lately ({@code evicted}) always goes, uncounted: clients ask that name again and again, where
   * a flood's names are new every time, and an honest hit pushed out by the flood must come back.
   */
  public String overBudget(CacheKey key, InetAddress client, boolean evicted) {
    if (evicted || !settings.enabled() || (!settings.includeLoopback() && client.isLoopbackAddress())) {
      return null;
    }
    long prefix = ResponseRateLimiter.prefixOf(client, settings.clientPrefixV4(), settings.clientPrefixV6());
    if (settings.perClient() > 0 && clients.increment(prefix) > settings.perClient()) {
      return CLIENT;
    }
    if (settings.perZone() > 0) {
      long zone = zoneHash(key, settings.zoneLabels());
      if (zones.increment(zone) > settings.perZone() && overSlice(zone, prefix)) {
        return ZONE;
      }
    }
    return null;
  }

  /**
   * Counts a miss of a zone over its budget against the client's slice: true when the slice, or
   * the zone's slices of this second in all, are used up.
   */
  private boolean overSlice(long zone, long prefix) {
    int taken = slices.incrementOrTakeOver((zone * 31 + prefix) | 1);
    if (taken == 1) {
      slicedClients.increment(zone);
    } else if (taken == PerSecondCounts.TOOK_OVER) {
      taken = 1; // counted before it lost its slot, perhaps: not counted as a newcomer again
    }
    int clients = slicedClients.lastSecond(zone);
    int slice = clients == 0 ? firstSlice : Math.max(1, settings.perZone() / clients);
    return taken > slice || sliced.increment(zone) > settings.perZone();
  }

  /**
   * A hash of the last {@code labels} labels of the key's name (the lower-cased wire form), never
   * 0; the whole name when it has fewer. Allocates nothing.
   */
  static long zoneHash(CacheKey key, int labels) {
    byte[] name = key.bytes();
    int length = key.nameLength();
    // Label starts from the left; the zone starts at the labels-th one from the end.
    int count = 0;
    for (int pos = 0; pos < length && name[pos] != 0; pos += (name[pos] & 0xFF) + 1) {
      count++;
    }
    int skip = Math.max(0, count - labels);
    int start = 0;
    for (int i = 0; i < skip; i++) {
      start += (name[start] & 0xFF) + 1;
    }
    long h = 0xcbf29ce484222325L;
    for (int i = start; i < length; i++) {
      h = (h ^ name[i]) * 0x100000001b3L;
    }
    return h == 0 ? 1 : h;
  }
}

package io.shoal.admin;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.TtlRules;
import io.shoal.metrics.CacheLoadMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A node's caches as {@code shoal cache dump} and {@code load} see them: the caches this node
 * fills for its profiles (in a cluster, its own share; the near copies of other nodes' answers are
 * not in the list it is given), and the profile table that says which cache a loaded name goes to.
 */
public final class CacheTransfer {
  /**
   * Answers a load hands a cache at a time, and waits for, before it reads on: what a load holds
   * in memory is this many answers per cache, whatever the size of the dump.
   */
  static final int LOAD_BATCH = 256;

  /**
   * What a load did, answer by answer of the dump ({@code read} in all): filled; expired since
   * the dump; not kept by this node's TTL rules; left out because the cache holds a live answer
   * for the key already; left out for want of room (a load never evicts a live answer); not
   * stored by the cache (an LMDB shard closing); unreadable; refused because their records do not
   * belong to their key. Also the authority and additional records dropped from the answers
   * loaded, and the first problems (at most {@link AnswerDump#PROBLEMS_SHOWN}).
   */
  public record Loaded(long read, long filled, long expired, long notKept, long alreadyCached, long noRoom,
      long notStored, long unreadable, long refused, long recordsDropped, List<AnswerDump.Problem> firstProblems) {}

  private final List<AnswerCache> caches;
  private final Supplier<ProfileTable> profiles;
  private final LongSupplier clock;
  private final CacheLoadMetrics metrics;

  public CacheTransfer(List<AnswerCache> caches, Supplier<ProfileTable> profiles, LongSupplier clock,
      CacheLoadMetrics metrics) {
    this.caches = List.copyOf(caches);
    this.profiles = profiles;
    this.clock = clock;
    this.metrics = metrics;
  }
  /**
   * Writes the unexpired answers whose name is {@code suffix} or under it (all, when null) to
   * {@code out}, between a header and an end line; returns how many. Blocking: the caches are
   * walked as they are read, never copied whole.
   */
  public long dump(String suffix, Writer out) throws IOException {
    String under = suffix == null ? null : canonical(suffix);
    long now = clock.getAsLong();
    long[] written = {0};
    AnswerDump.writeHeader(out, now);
    try {
      for (AnswerCache cache : caches) {
        cache.entries((key, answer) -> {
          if (under == null || within(key.name(), under)) {
            try {
              if (AnswerDump.write(out, key, answer, now)) {
                written[0]++;
              }
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          }
        });
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
    AnswerDump.writeEnd(out, written[0]);
    out.flush();
    return written[0];
  }

  /** {@code name} lower-cased, with its trailing dot: how cache keys print names. */
  static String canonical(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    return n.endsWith(".") ? n : n + ".";
  }

  private static boolean within(String name, String suffix) {
    return suffix.equals(".") || name.equals(suffix) || name.endsWith("." + suffix);
  }

  /**
   * Fills the answers of a dump into the cache of each name's profile, under that profile's TTL
   * rules, their TTLs aged by the time since the dump; expired ones are left out. Each cache
   * takes them only into its free room ({@link AnswerCache#loadIntoRoom}): a load never evicts a
   * live answer, and a key the cache holds live keeps its answer. Streamed: {@link #LOAD_BATCH}
   * answers per cache at most are held at a time.
   */
  public Loaded load(Reader in) throws IOException, AnswerDump.FormatException {
    long now = clock.getAsLong();
    long[] counts = new long[AnswerCache.Loaded.values().length];
    long[] notKept = {0};
    Map<AnswerCache, List<AnswerCache.Keyed>> batches = new IdentityHashMap<>();
    AnswerDump.ReadCount read = AnswerDump.read(in, now, entry -> {
      Profile profile = profiles.get().match(entry.key());
      TtlRules rules = profile.ttlRules();
      long seconds = rules.cacheSeconds(entry.answer());
      if (seconds <= 0) {
        notKept[0]++;
        return;
      }
      CachedAnswer kept = rules.cachedAnswer(entry.answer(), now, seconds);
      // This node's rules may keep it for less than the dump says is left; never for more.
      CachedAnswer answer = new CachedAnswer(kept.wire(), kept.ttlOffsets(), kept.optStart(), kept.optEnd(), now,
          Math.min(kept.expiresAtMillis(), entry.expiresAtMillis()));
      List<AnswerCache.Keyed> batch = batches.computeIfAbsent(profile.cache(), c -> new ArrayList<>(LOAD_BATCH));
      batch.add(new AnswerCache.Keyed(entry.key(), answer));
      if (batch.size() >= LOAD_BATCH) {
        settle(profile.cache(), batch, now, counts);
      }
    });
    for (Map.Entry<AnswerCache, List<AnswerCache.Keyed>> b : batches.entrySet()) {
      settle(b.getKey(), b.getValue(), now, counts);
    }
    Loaded loaded = new Loaded(read.entries() + read.expired() + read.unreadable() + read.refused(),
        counts[AnswerCache.Loaded.STORED.ordinal()], read.expired(), notKept[0],
        counts[AnswerCache.Loaded.ALREADY_CACHED.ordinal()], counts[AnswerCache.Loaded.NO_ROOM.ordinal()],
        counts[AnswerCache.Loaded.NOT_STORED.ordinal()], read.unreadable(), read.refused(), read.recordsDropped(),
        read.firstProblems());
    metrics.answers("filled", loaded.filled());
    metrics.answers("expired", loaded.expired());
    metrics.answers("not_kept", loaded.notKept());
    metrics.answers("already_cached", loaded.alreadyCached());
    metrics.answers("no_room", loaded.noRoom());
    metrics.answers("not_stored", loaded.notStored());
    metrics.answers("unreadable", loaded.unreadable());
    metrics.answers("refused", loaded.refused());
    metrics.recordsDropped(loaded.recordsDropped());
    return loaded;
  }

  /**
   * Hands {@code batch} to {@code cache}, waits for it and counts the outcomes by kind; empties
   * the batch. A cache that does not answer in time ends the load (a CompletionException).
   */
  private static void settle(AnswerCache cache, List<AnswerCache.Keyed> batch, long now, long[] counts) {
    if (batch.isEmpty()) {
      return;
    }
    AnswerCache.Loaded[] results = cache.loadIntoRoom(List.copyOf(batch), now).toCompletableFuture().join();
    for (AnswerCache.Loaded r : results) {
      counts[r.ordinal()]++;
    }
    batch.clear();
  }
}

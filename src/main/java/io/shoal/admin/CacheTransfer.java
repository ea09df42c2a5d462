package io.shoal.admin;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.TtlRules;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A node's caches as {@code shoal cache dump} and {@code load} see them: the caches this node
 * fills for its profiles (in a cluster, its own share; the near copies of other nodes' answers are
 * not in the list it is given), and the profile table that says which cache a loaded name goes to.
 */
public final class CacheTransfer {
  /** Fills a load lets wait before it waits for them: LMDB shards refuse fills beyond their queue. */
  private static final int FILLS_IN_FLIGHT = 256;

  /**
   * What a load did: answers filled, expired since the dump, not kept by this node's TTL rules,
   * refused by a cache (a full LMDB fill queue), and answers that would not parse.
   */
  public record Loaded(int filled, int expired, int notKept, int refused, List<String> unreadable) {}

  private final List<AnswerCache> caches;
  private final Supplier<ProfileTable> profiles;
  private final LongSupplier clock;

  public CacheTransfer(List<AnswerCache> caches, Supplier<ProfileTable> profiles, LongSupplier clock) {
    this.caches = List.copyOf(caches);
    this.profiles = profiles;
    this.clock = clock;
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
   * rules, their TTLs aged by the time since the dump; expired ones are left out.
   */
  public Loaded load(BufferedReader in) throws IOException, AnswerDump.FormatException {
    long now = clock.getAsLong();
    int[] counts = new int[3];
    List<CompletableFuture<Boolean>> inFlight = new ArrayList<>();
    AnswerDump.ReadCount read = AnswerDump.read(in, now, entry -> {
      Profile profile = profiles.get().match(entry.key());
      TtlRules rules = profile.ttlRules();
      long seconds = rules.cacheSeconds(entry.answer());
      if (seconds <= 0) {
        counts[1]++;
        return;
      }
      CachedAnswer kept = rules.cachedAnswer(entry.answer(), now, seconds);
      // This node's rules may keep it for less than the dump says is left; never for more.
      CachedAnswer answer = new CachedAnswer(kept.wire(), kept.ttlOffsets(), kept.optStart(), kept.optEnd(), now,
          Math.min(kept.expiresAtMillis(), entry.expiresAtMillis()));
      inFlight.add(profile.cache().fill(entry.key(), answer).toCompletableFuture());
      if (inFlight.size() >= FILLS_IN_FLIGHT) {
        settle(inFlight, counts);
      }
    });
    settle(inFlight, counts);
    return new Loaded(counts[0], read.expired(), counts[1], counts[2], read.unreadable());
  }

  /** Waits for the fills in flight; counts those stored ({@code counts[0]}) and refused ({@code counts[2]}). */
  private static void settle(List<CompletableFuture<Boolean>> inFlight, int[] counts) {
    for (CompletableFuture<Boolean> f : inFlight) {
      boolean stored;
      try {
        stored = f.join();
      } catch (RuntimeException e) {
        stored = false;
      }
      counts[stored ? 0 : 2]++;
    }
    inFlight.clear();
  }
}

package io.shoal.profile;

import io.shoal.upstream.Upstream;
import io.shoal.wire.CacheKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Picks the profile for a question name: the one whose suffix matches the most labels. Suffixes
 * are compared as lower-cased wire bytes against the cache key, label-aligned, without building
 * strings on the query path.
 */
public final class ProfileTable {
  /** Entries by suffix length in wire octets; arrays, so a lookup allocates no iterator. */
  private final Entry[][] bySuffixLength;

  /** The root profile when it is the only one (the default), which then answers every name; else null. */
  private final Profile only;

  private record Entry(byte[] suffix, Profile profile) {}

  /** {@code suffixes} maps each suffix (presentation form, e.g. {@code cluster.local.}) to its profile. */
  public ProfileTable(Map<String, Profile> suffixes) {
    List<List<Entry>> table = new ArrayList<>();
    for (int i = 0; i <= 255; i++) {
      table.add(List.of());
    }
    for (Map.Entry<String, Profile> e : suffixes.entrySet()) {
      byte[] wire = CacheKey.nameToWire(e.getKey().toLowerCase(Locale.ROOT));
      List<Entry> list = new ArrayList<>(table.get(wire.length));
      list.add(new Entry(wire, e.getValue()));
      table.set(wire.length, List.copyOf(list));
    }
    this.bySuffixLength = table.stream().map(l -> l.toArray(Entry[]::new)).toArray(Entry[][]::new);
    this.only = suffixes.size() == 1 && bySuffixLength[1].length == 1 ? bySuffixLength[1][0].profile : null;
  }

  /** Every profile's upstream, each once. */
  public List<Upstream> upstreams() {
    return Arrays.stream(bySuffixLength).flatMap(Arrays::stream).map(e -> e.profile.upstream()).distinct().toList();
  }

  /**
   * The profile for the name of {@code packet}'s question (wire form at offset 12, in any case),
   * read from the packet as it came; null when the name does not end within the packet. For a
   * reader warming the caches of a batch before it parses the batch's queries.
   */
  public Profile matchQuestion(byte[] packet) {
    if (only != null) {
      return only;
    }
    int start = 12;
    int end = start;
    while (end < packet.length && packet[end] != 0) {
      end += (packet[end] & 0xFF) + 1;
    }
    int nameLen = end + 1 - start;
    if (end >= packet.length || nameLen >= bySuffixLength.length) {
      return null;
    }
    return matchName(packet, start, nameLen, false);
  }

  /**
   * The profile of the longest suffix of the wire-form name of {@code nameLen} bytes at {@code
   * start} in {@code name}, compared at label starts; null when none. {@code lowered}: the name is
   * already in lower case, so a plain (vectorised) compare does.
   */
  private Profile matchName(byte[] name, int start, int nameLen, boolean lowered) {
    int nameEnd = start + nameLen;
    for (int pos = start; pos < nameEnd; pos += (name[pos] & 0xFF) + 1) {
      int tail = nameEnd - pos;
      for (Entry e : bySuffixLength[tail]) {
        if (lowered ? Arrays.equals(name, pos, nameEnd, e.suffix, 0, tail) : equalsIgnoringCase(name, pos, e.suffix, tail)) {
          return e.profile;
        }
      }
      if (name[pos] == 0) {
        break;
      }
    }
    return null;
  }

  /** Whether {@code length} bytes of {@code name} from {@code from} are {@code lowered}'s, ASCII case aside. */
  private static boolean equalsIgnoringCase(byte[] name, int from, byte[] lowered, int length) {
    for (int i = 0; i < length; i++) {
      byte b = name[from + i];
      if ((b >= 'A' && b <= 'Z' ? b + 32 : b) != lowered[i]) {
        return false;
      }
    }
    return true;
  }

  /** The profile for {@code key}'s name; the root suffix guarantees there is one. */
  public Profile match(CacheKey key) {
    if (only != null) {
      return only;
    }
    Profile matched = matchName(key.bytes(), 0, key.nameLength(), true);
    if (matched == null) {
      throw new IllegalStateException("no profile matches " + key.name() + "; the root profile is missing");
    }
    return matched;
  }

}

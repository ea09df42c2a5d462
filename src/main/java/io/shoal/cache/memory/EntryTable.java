package io.shoal.cache.memory;

import io.shoal.wire.CacheKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The memory cache's index: an open-addressing table (linear probing) of entries, one reference
 * per slot and no node per entry. Readers probe it from any thread without a lock ({@link
 * #find}): slots are written with release and read with acquire, and a grown table is built
 * aside and published whole. Writers hold the cache's lock.
 */
final class EntryTable {
  private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Entry[].class);
  private static final Entry TOMBSTONE = Entry.TOMBSTONE;
  private static final int MIN_TABLE = 16;

  /** The table readers probe; replaced whole (and published by this write) when it grows. */
  private volatile Entry[] slots = new Entry[MIN_TABLE];
  /** Live entries and tombstones: the table is rebuilt before they fill 3/4 of it. */
  private int occupied;
  private volatile int size;

  /** The entry for {@code key}, or null; safe without the lock. */
  Entry find(CacheKey key) {
    Entry[] t = slots;
    int mask = t.length - 1;
    int i = spread(key.hashCode()) & mask;
    for (int probes = 0; probes < t.length; probes++, i = (i + 1) & mask) {
      Entry e = (Entry) SLOTS.getAcquire(t, i);
      if (e == null) {
        return null;
      }
      if (e != TOMBSTONE && e.is(key)) {
        return e;
      }
    }
    return null;
  }

  /**
   * Reads the first slot a key of hash {@code hash} probes, the entry there and its answer's
   * wire, without the lock (a racing write only makes it read another entry): what {@link #find}
   * reads for most keys. See {@link io.shoal.cache.AnswerCache#warm}.
   */
  int warm(int hash) {
    Entry[] t = slots;
    Entry e = t[spread(hash) & (t.length - 1)];
    if (e == null || e == TOMBSTONE) {
      return 0;
    }
    byte[] wire = e.answer.wire();
    return e.hash ^ wire[wire.length - 1]; // the array's header, and its last line
  }

  /** The slot of {@code key}, or -1; under the lock. */
  int slotOf(CacheKey key) {
    Entry[] t = slots;
    int mask = t.length - 1;
    int i = spread(key.hashCode()) & mask;
    for (int probes = 0; probes < t.length; probes++, i = (i + 1) & mask) {
      Entry e = t[i];
      if (e == null) {
        return -1;
      }
      if (e != TOMBSTONE && e.is(key)) {
        return i;
      }
    }
    return -1;
  }

  /** Slots to walk with {@link #at}. */
  int capacity() {
    return slots.length;
  }

  /** The live entry in {@code slot}, or null; under the lock. */
  Entry at(int slot) {
    Entry e = slots[slot];
    return e == TOMBSTONE ? null : e;
  }

  /** The live entry in {@code slot} of the table as a reader sees it, or null; without the lock. */
  static Entry visible(Entry[] t, int slot) {
    Entry e = (Entry) SLOTS.getAcquire(t, slot);
    return e == TOMBSTONE ? null : e;
  }

  /** The table as it is now, for a walk without the lock ({@link #visible}). */
  Entry[] snapshot() {
    return slots;
  }

  /** Puts {@code e} in place of the entry in {@code slot} (same key). */
  void replace(int slot, Entry e) {
    SLOTS.setRelease(slots, slot, e);
  }

  /** Puts a new key's entry in the table, growing or cleaning it first when it is 3/4 occupied. */
  void insert(Entry entry) {
    if ((occupied + 1) * 4L > slots.length * 3L) {
      rebuild();
    }
    Entry[] t = slots;
    int mask = t.length - 1;
    int i = spread(entry.hash) & mask;
    while (t[i] != null && t[i] != TOMBSTONE) {
      i = (i + 1) & mask;
    }
    if (t[i] == null) {
      occupied++;
    }
    SLOTS.setRelease(t, i, entry);
    size++;
  }

  /** Removes the entry in {@code slot} and returns it. */
  Entry removeAt(int slot) {
    Entry e = slots[slot];
    SLOTS.setRelease(slots, slot, TOMBSTONE);
    size--;
    return e;
  }

  int size() {
    return size;
  }

  /** A new table for the live entries (twice their number at least, no tombstones), then published. */
  private void rebuild() {
    int capacity = MIN_TABLE;
    while (capacity * 3L < (size + 1) * 8L) {
      capacity <<= 1;
    }
    Entry[] fresh = new Entry[capacity];
    int mask = capacity - 1;
    for (Entry e : slots) {
      if (e != null && e != TOMBSTONE) {
        int i = spread(e.hash) & mask;
        while (fresh[i] != null) {
          i = (i + 1) & mask;
        }
        fresh[i] = e;
      }
    }
    occupied = size;
    slots = fresh;
  }

  private static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B1;
  }
}

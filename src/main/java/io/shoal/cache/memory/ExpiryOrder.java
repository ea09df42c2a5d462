package io.shoal.cache.memory;

import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A set of entries in one array, each knowing its place (an entry is in one order at most): a binary heap by expiry (soonest
 * first) for {@code evict_one}, or a dense array to sample at random for {@code sample}. One
 * array of references and no node per entry; used under the cache's write lock only.
 */
final class ExpiryOrder {
  private static final int MIN_CAPACITY = 16;

  /** A heap by expiry; otherwise in no order. */
  private final boolean heap;
  private Entry[] entries = new Entry[MIN_CAPACITY];
  private int count;

  ExpiryOrder(boolean heap) {
    this.heap = heap;
  }

  int size() {
    return count;
  }

  /** The entry that expires soonest (in a heap), or null when empty. */
  Entry first() {
    return count == 0 ? null : entries[0];
  }

  /** An entry chosen at random; the order must not be empty. */
  Entry random(ThreadLocalRandom rnd) {
    return entries[rnd.nextInt(count)];
  }

  void add(Entry e) {
    if (count == entries.length) {
      entries = Arrays.copyOf(entries, count * 2);
    }
    entries[count] = e;
    setIndex(e, count++);
    if (heap) {
      siftUp(count - 1);
    }
  }

  /** Removes {@code e}: the last entry takes its place (and, in a heap, moves to where it belongs). */
  void remove(Entry e) {
    int at = e.index;
    int last = --count;
    Entry moved = entries[last];
    entries[last] = null;
    if (at != last) {
      entries[at] = moved;
      setIndex(moved, at);
      if (heap) {
        siftDown(at);
        siftUp(moved.index);
      }
    }
    // Give back the array's room when a flush emptied most of it.
    if (entries.length > MIN_CAPACITY && count < entries.length / 4) {
      entries = Arrays.copyOf(entries, Math.max(MIN_CAPACITY, entries.length / 2));
    }
  }

  private void siftUp(int i) {
    Entry e = entries[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      Entry p = entries[parent];
      if (!e.before(p)) {
        break;
      }
      entries[i] = p;
      setIndex(p, i);
      i = parent;
    }
    entries[i] = e;
    setIndex(e, i);
  }

  private void siftDown(int i) {
    Entry e = entries[i];
    while (true) {
      int child = 2 * i + 1;
      if (child >= count) {
        break;
      }
      if (child + 1 < count && entries[child + 1].before(entries[child])) {
        child++;
      }
      if (!entries[child].before(e)) {
        break;
      }
      entries[i] = entries[child];
      setIndex(entries[i], i);
      i = child;
    }
    entries[i] = e;
    setIndex(e, i);
  }

  private static void setIndex(Entry e, int i) {
    e.index = i;
  }
}

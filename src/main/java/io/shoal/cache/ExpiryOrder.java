package io.shoal.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A set of elements in one array, each knowing its place (an element is in one order at most): a
 * binary heap, soonest first ({@link Placed#before}), for {@code evict_one}, or a dense array to
 * sample at random for {@code sample}. One array of references and no node per element; used by
 * one writer at a time (the memory cache's write lock, an LMDB shard's actor).
 */
public final class ExpiryOrder<E extends ExpiryOrder.Placed<E>> {
  private static final int MIN_CAPACITY = 16;

  /** What an order holds: an element that keeps its own place in it. */
  public abstract static class Placed<E> {
    /** Its place in the order; -1 when in none. Written by the order only. */
    private int place = -1;

    /** Its place in the order; -1 when in none. */
    public final int place() {
      return place;
    }

    /** Whether it goes before {@code other} (expires sooner, then a tie-break that never says equal). */
    public abstract boolean before(E other);
  }

  /** A heap by expiry; otherwise in no order. */
  private final boolean heap;
  private Object[] elements = new Object[MIN_CAPACITY];
  private int count;

  public ExpiryOrder(boolean heap) {
    this.heap = heap;
  }

  public int size() {
    return count;
  }

  /** The element that expires soonest (in a heap), or null when empty. */
  public E first() {
    return count == 0 ? null : at(0);
  }

  /** The element at place {@code i}, 0 to {@link #size} - 1 (for a walk in no order). */
  public E get(int i) {
    return at(i);
  }

  /** An element chosen at random; the order must not be empty. */
  public E random(ThreadLocalRandom rnd) {
    return at(rnd.nextInt(count));
  }

  /**
   * Up to {@code n} elements of a heap that expire soonest, soonest first: a walk of the heap's
   * top, taking the soonest of the places reached so far, n log n steps whatever the size.
   */
  public List<E> soonest(int n) {
    int want = Math.min(n, count);
    List<E> out = new ArrayList<>(want);
    PriorityQueue<Integer> frontier = new PriorityQueue<>(Math.max(1, 2 * want),
        (a, b) -> a.equals(b) ? 0 : at(a).before(at(b)) ? -1 : 1);
    if (want > 0) {
      frontier.add(0);
    }
    while (out.size() < want) {
      int top = frontier.poll();
      out.add(at(top));
      for (int child = 2 * top + 1; child <= 2 * top + 2 && child < count; child++) {
        frontier.add(child);
      }
    }
    return out;
  }

  public void add(E e) {
    if (count == elements.length) {
      elements = Arrays.copyOf(elements, count * 2);
    }
    elements[count] = e;
    setPlace(e, count++);
    if (heap) {
      siftUp(count - 1);
    }
  }

  /** Removes {@code e}: the last element takes its place (and, in a heap, moves to where it belongs). */
  public void remove(E e) {
    int at = e.place();
    int last = --count;
    E moved = at(last);
    elements[last] = null;
    setPlace(e, -1);
    if (at != last) {
      elements[at] = moved;
      setPlace(moved, at);
      if (heap) {
        siftDown(at);
        siftUp(moved.place());
      }
    }
    // Give back the array's room when a flush emptied most of it.
    if (elements.length > MIN_CAPACITY && count < elements.length / 4) {
      elements = Arrays.copyOf(elements, Math.max(MIN_CAPACITY, elements.length / 2));
    }
  }

  /** {@code e}, in the order, changed its expiry: it moves to where it now belongs. */
  public void moved(E e) {
    if (heap) {
      siftDown(e.place());
      siftUp(e.place());
    }
  }

  /** Empties the order (its elements' places are left as they were). */
  public void clear() {
    elements = new Object[MIN_CAPACITY];
    count = 0;
  }

  @SuppressWarnings("unchecked")
  private E at(int i) {
    return (E) elements[i];
  }

  private void siftUp(int i) {
    E e = at(i);
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      E p = at(parent);
      if (!e.before(p)) {
        break;
      }
      elements[i] = p;
      setPlace(p, i);
      i = parent;
    }
    elements[i] = e;
    setPlace(e, i);
  }

  private void siftDown(int i) {
    E e = at(i);
    while (true) {
      int child = 2 * i + 1;
      if (child >= count) {
        break;
      }
      if (child + 1 < count && at(child + 1).before(at(child))) {
        child++;
      }
      if (!at(child).before(e)) {
        break;
      }
      E c = at(child);
      elements[i] = c;
      setPlace(c, i);
      i = child;
    }
    elements[i] = e;
    setPlace(e, i);
  }

  private static void setPlace(Placed<?> e, int at) {
    e.place = at;
  }
}

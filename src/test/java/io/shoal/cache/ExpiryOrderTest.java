package io.shoal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ExpiryOrderTest {
  /** An element expiring at {@code at} (changed in place by a test of {@code moved}), ties broken by {@code id}. */
  private static final class Item extends ExpiryOrder.Placed<Item> {
    long at;
    final int id;

    Item(long at, int id) {
      this.at = at;
      this.id = id;
    }

    @Override
    public boolean before(Item o) {
      return at != o.at ? at < o.at : id < o.id;
    }
  }

  private static final Comparator<Item> SOONEST = Comparator.<Item>comparingLong(i -> i.at).thenComparingInt(i -> i.id);

  @Test
  void anEmptyHeapHasNoFirstAndNothingSoonest() {
    ExpiryOrder<Item> order = new ExpiryOrder<>(true);
    assertNull(order.first());
    assertEquals(List.of(), order.soonest(128));
  }

  /** Adds, removes and moves at random, checking the soonest and the first n against a sorted copy. */
  @Test
  void heapAgreesWithASortedListThroughAddsRemovesAndMoves() {
    Random rnd = new Random(41);
    ExpiryOrder<Item> order = new ExpiryOrder<>(true);
    List<Item> held = new ArrayList<>();
    for (int step = 0; step < 20_000; step++) {
      int op = rnd.nextInt(10);
      if (op < 5 || held.isEmpty()) {
        Item i = new Item(rnd.nextInt(500), step);
        order.add(i);
        held.add(i);
      } else if (op < 8) {
        Item i = held.remove(rnd.nextInt(held.size()));
        order.remove(i);
        assertEquals(-1, i.place());
      } else {
        // A key filled again: a new expiry for an element held, moved in place.
        int k = rnd.nextInt(held.size());
        Item was = held.get(k);
        order.remove(was);
        Item now = new Item(rnd.nextInt(500), was.id);
        order.add(now);
        held.set(k, now);
      }
      assertEquals(held.size(), order.size());
      if (step % 97 == 0) {
        List<Item> sorted = new ArrayList<>(held);
        sorted.sort(SOONEST);
        int n = rnd.nextInt(300);
        assertEquals(sorted.subList(0, Math.min(n, sorted.size())), order.soonest(n), "step " + step);
        assertEquals(sorted.isEmpty() ? null : sorted.get(0), order.first());
      }
    }
  }

  @Test
  void movedPutsAChangedElementBackInOrder() {
    ExpiryOrder<Item> order = new ExpiryOrder<>(true);
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      Item m = new Item(1000 + i, i);
      items.add(m);
      order.add(m);
    }
    Item last = items.get(99);
    last.at = 1;
    order.moved(last);
    assertEquals(last, order.first());
    last.at = 5000;
    order.moved(last);
    assertEquals(items.get(0), order.first());
    assertEquals(last, order.soonest(100).get(99));
  }
}

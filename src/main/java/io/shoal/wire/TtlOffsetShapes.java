package io.shoal.wire;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One array per shape of TTL offsets. An answer's TTL offsets depend only on the lengths of its
 * names and records, so the answers of a cache share a few thousand shapes at most (every
 * {@code nNNN.example.} A answer of the same name length has the same offsets); a million cached
 * answers then hold a few thousand arrays instead of a million (24 bytes and more each). The
 * arrays handed out are shared and never written.
 */
public final class TtlOffsetShapes {
  /** Shapes kept at most; past that an answer keeps an array of its own. */
  static final int MAX_SHAPES = 16_384;

  private static final ConcurrentHashMap<Shape, int[]> SHAPES = new ConcurrentHashMap<>();
  private static final int[] NONE = new int[0];

  private TtlOffsetShapes() {}

  /** The shared array holding {@code offsets[0..count)}. */
  public static int[] of(int[] offsets, int count) {
    if (count == 0) {
      return NONE;
    }
    Shape probe = new Shape(offsets, count);
    int[] shared = SHAPES.get(probe);
    if (shared != null) {
      return shared;
    }
    int[] own = Arrays.copyOf(offsets, count);
    if (SHAPES.size() >= MAX_SHAPES) {
      return own;
    }
    int[] raced = SHAPES.putIfAbsent(new Shape(own, count), own);
    return raced == null ? own : raced;
  }

  private static final class Shape {
    private final int[] offsets;
    private final int count;
    private final int hash;

    Shape(int[] offsets, int count) {
      this.offsets = offsets;
      this.count = count;
      int h = count;
      for (int i = 0; i < count; i++) {
        h = 31 * h + offsets[i];
      }
      this.hash = h;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Shape s && s.hash == hash
          && Arrays.equals(s.offsets, 0, s.count, offsets, 0, count);
    }

    @Override
    public int hashCode() {
      return hash;
    }
  }
}

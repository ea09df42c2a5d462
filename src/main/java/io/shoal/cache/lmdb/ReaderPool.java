package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.lmdbjava.Cursor;
import org.lmdbjava.Dbi;
import org.lmdbjava.Env;
import org.lmdbjava.GetOp;
import org.lmdbjava.Txn;

/**
 * The read transactions of one shard's environment: one per reading thread, kept open between
 * reads and renewed only when the shard has committed since the thread's last read. A hit then
 * costs one {@code mdb_get} and the copy out of the map; renewing on every read (two more JNI
 * calls and a write to the shared reader table) cost more than the look-up itself.
 *
 * <p>A transaction kept open pins its snapshot: pages freed by later commits cannot be reused
 * while it lives. So the writer, after each commit, resets the transactions of threads that have
 * not read since the commit before; a thread that stopped reading pins at most one commit's pages.
 *
 * <p>Each slot has a state that both sides change only by compare-and-set: RESET or OPEN when
 * idle, BUSY while its thread reads, CLAIMED while the writer resets it, or for good once the
 * pool is closed. A reader that finds its slot claimed, or the pool paused or closed, answers a
 * miss at once: on the hit path a miss is cheaper than a wait.
 */
final class ReaderPool implements AutoCloseable {
  private static final int RESET = 0;
  private static final int OPEN = 1;
  private static final int BUSY = 2;
  private static final int CLAIMED = 3;

  private static final int READABLE = 0;
  private static final int PAUSED = 1;
  private static final int CLOSED = 2;

  private final Env<ByteBuffer> env;
  private final Dbi<ByteBuffer> answers;
  private final ThreadLocal<Slot> local = new ThreadLocal<>();
  /** Guards {@link #slots} and orders the writer's pause and close against registration. */
  private final Object lock = new Object();
  private final List<Slot> slots = new ArrayList<>();
  /** READABLE, PAUSED (the map is being resized) or CLOSED; readers check it once they are BUSY. */
  private volatile int gate = READABLE;
  /** Commits so far; a slot whose snapshot is older renews before it reads. */
  private volatile long generation;

  /** One thread's read transaction and key buffer. */
  private static final class Slot {
    final WeakReference<Thread> owner;
    final Txn<ByteBuffer> txn;
    final ByteBuffer key = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY);
    final AtomicInteger state = new AtomicInteger(RESET);
    /** The generation the open snapshot was taken at; written by the owner while BUSY. */
    volatile long snapshot = -1;

    Slot(Thread owner, Txn<ByteBuffer> txn) {
      this.owner = new WeakReference<>(owner);
      this.txn = txn;
    }

    boolean abandoned() {
      Thread t = owner.get();
      return t == null || !t.isAlive();
    }
  }

  ReaderPool(Env<ByteBuffer> env, Dbi<ByteBuffer> answers) {
    this.env = env;
    this.answers = answers;
  }

  /**
   * The unexpired answer under {@code key}, or null when absent, expired at {@code nowMillis}, or
   * the pool is paused, closed or out of reader slots.
   */
  CachedAnswer read(byte[] key, long nowMillis) {
    Slot slot = busySlot();
    if (slot == null) {
      return null;
    }
    try {
      ByteBuffer value = answers.get(slot.txn, AnswerCodec.copyInto(slot.key, key));
      if (value == null || AnswerCodec.expiresAt(value) <= nowMillis) {
        return null;
      }
      // decode copies the bytes out of the map: the snapshot may move on after this read.
      return CachedAnswer.decode(value);
    } finally {
      slot.state.set(OPEN);
    }
  }

  /**
   * This thread's slot, taken for a read (BUSY) with its transaction renewed to the latest
   * commit; the caller sets it OPEN when done. Null when the slot is claimed, or the pool is out
   * of reader slots, paused or closed: on the hit path a miss is cheaper than a wait.
   */
  private Slot busySlot() {
    Slot slot = local.get();
    if (slot == null && (slot = register()) == null) {
      return null;
    }
    int idle = slot.state.get();
    if ((idle != OPEN && idle != RESET) || !slot.state.compareAndSet(idle, BUSY)) {
      return null;
    }
    try {
      if (gate != READABLE) {
        slot.state.set(idle);
        return null;
      }
      long now = generation;
      if (idle == OPEN && slot.snapshot != now) {
        slot.txn.reset();
        idle = RESET;
      }
      if (idle == RESET) {
        renew(slot, now);
      }
      return slot;
    } catch (RuntimeException e) {
      slot.state.set(idle);
      throw e;
    }
  }

  /** A stored answer as a scan copies it out of the map: its key bytes and the answer. */
  record Stored(byte[] key, CachedAnswer answer) {}

  /**
   * Up to {@code max} stored answers in key order after {@code after} (from the first when null),
   * expired ones included; an empty list at the end. A chunk per call, read in this thread's
   * transaction like a look-up: the snapshot is pinned only while the chunk is copied, so a dump
   * never keeps the writer from reusing pages or resizing the map for longer than one chunk.
   * Waits while the map is being resized; throws {@link IllegalStateException} once the pool is
   * closed.
   */
  List<Stored> scan(byte[] after, int max) {
    while (true) {
      if (gate == CLOSED) {
        throw new IllegalStateException("the shard closed during the scan");
      }
      Slot slot = busySlot();
      if (slot != null) {
        try {
          return chunk(slot.txn, after, max);
        } finally {
          slot.state.set(OPEN);
        }
      }
      // Paused for a resize, or the slot claimed for a moment by the writer: a dump can wait.
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted during the scan", e);
      }
    }
  }

  private List<Stored> chunk(Txn<ByteBuffer> txn, byte[] after, int max) {
    List<Stored> out = new ArrayList<>(Math.min(max, 1024));
    try (Cursor<ByteBuffer> c = answers.openCursor(txn)) {
      boolean found = after == null ? c.first() : c.get(AnswerCodec.direct(after), GetOp.MDB_SET_RANGE);
      if (found && after != null && Arrays.equals(AnswerCodec.bytes(c.key()), after)) {
        found = c.next();
      }
      while (found && out.size() < max) {
        // Copied out: the sink may be slow, and must not hold this snapshot while it is.
        out.add(new Stored(AnswerCodec.bytes(c.key()), CachedAnswer.decode(c.val())));
        found = c.next();
      }
    }
    return out;
  }

  private static void renew(Slot slot, long generation) {
    try {
      slot.txn.renew();
    } catch (RuntimeException e) {
      try {
        slot.txn.reset();
      } catch (RuntimeException ignored) {
        // Already reset: the slot stays usable for the next read.
      }
      throw e;
    }
    slot.snapshot = generation;
  }

  /** Commits so far: a read that starts after this many has a snapshot that includes them. */
  long generation() {
    return generation;
  }

  private Slot register() {
    synchronized (lock) {
      if (gate != READABLE) {
        return null;
      }
      reclaimAbandoned();
      Txn<ByteBuffer> txn;
      try {
        txn = env.txnRead();
      } catch (Env.ReadersFullException e) {
        env.readerCheck();
        return null;
      }
      txn.reset();
      Slot slot = new Slot(Thread.currentThread(), txn);
      slots.add(slot);
      local.set(slot);
      return slot;
    }
  }

  /** Frees the read transactions of threads that have died: their slots would never be reused. */
  private void reclaimAbandoned() {
    for (Iterator<Slot> it = slots.iterator(); it.hasNext(); ) {
      Slot slot = it.next();
      if (slot.abandoned()) {
        int idle = claim(slot);
        release(slot, idle);
        it.remove();
      }
    }
  }

  /**
   * The writer committed: readers renew before their next read, and the snapshots of threads
   * that have not read since the commit before are released, so they pin no freed pages.
   */
  void committed() {
    long now = ++generation;
    synchronized (lock) {
      for (Slot slot : slots) {
        if (slot.snapshot < now - 1 && slot.state.compareAndSet(OPEN, CLAIMED)) {
          slot.txn.reset();
          slot.state.set(RESET);
        }
      }
    }
  }

  /**
   * Runs {@code work} with no read transaction active in this process (LMDB's condition for
   * resizing the map); readers miss meanwhile.
   */
  void paused(Runnable work) {
    synchronized (lock) {
      gate = PAUSED;
      try {
        for (Slot slot : slots) {
          if (claim(slot) == OPEN) {
            slot.txn.reset();
          }
        }
        work.run();
      } finally {
        for (Slot slot : slots) {
          slot.state.set(RESET);
        }
        gate = READABLE;
      }
    }
  }

  /** Ends every reader's transaction; later reads are misses. The environment is the caller's to close. */
  @Override
  public void close() {
    synchronized (lock) {
      if (gate == CLOSED) {
        return;
      }
      gate = CLOSED;
      for (Slot slot : slots) {
        release(slot, claim(slot));
      }
      slots.clear();
    }
  }

  /** Waits for the slot's reader to finish (a single look-up) and claims it; returns its idle state. */
  private static int claim(Slot slot) {
    for (int spins = 0; ; spins++) {
      int s = slot.state.get();
      if ((s == OPEN || s == RESET) && slot.state.compareAndSet(s, CLAIMED)) {
        return s;
      }
      if (s == CLAIMED) {
        return CLAIMED;
      }
      if (spins < 1000) {
        Thread.onSpinWait();
      } else {
        Thread.yield();
      }
    }
  }

  private static void release(Slot slot, int idle) {
    try {
      if (idle == RESET) {
        // A reset transaction is only freed by an abort, and only a renewed one can be aborted.
        slot.txn.renew();
      }
      slot.txn.close();
    } catch (RuntimeException ignored) {
      // Best effort: the environment is going away or the slot's thread is gone.
    }
  }
}

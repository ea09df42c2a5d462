package io.shoal.dnssec;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.Name;

/**
 * The threads DNSSEC validation runs on (signature checks, the validator's steps between key
 * fetches): one per core, shared by every upstream group, with a bounded queue. Validation is CPU
 * work, so more threads than cores would not finish it sooner; its own threads keep it off the
 * threads that read sockets, off the actors' dispatchers and off the JVM's common pool, which
 * other parts use. When the queue is full (a flood of misses in signed zones faster than the
 * cores can check), the step is refused at once: that validation ends as indeterminate (SERVFAIL
 * with EDE 22, or a stale answer) instead of holding every later one behind it.
 *
 * <p>Waiting steps are kept in lanes, one per zone the validated names sit in (a name's parent:
 * the names of one zone share its keys), and the threads take from the lanes in turn: a flood of
 * misses in one zone, however slow its keys, delays another zone's validation by one step per
 * busy lane, not by the whole flood. Within a lane the validation that began first goes first,
 * so a validation in progress finishes before newer ones start their checks (one FIFO queue
 * would interleave every validation's steps and make each wait for all of them).
 */
final class ValidationThreads implements Executor {
  private static final Logger log = LoggerFactory.getLogger(ValidationThreads.class);
  /** Steps that may wait beyond the running ones; each is short (a few signature checks at most). */
  static final int QUEUE = 10_000;

  private static final String NAME = "shoal-dnssec-";
  private static final ValidationThreads SHARED =
      new ValidationThreads(Math.max(2, Runtime.getRuntime().availableProcessors()), QUEUE);
  /** The lane of steps that belong to no one validation (a resolving group's walk, the start's checks). */
  private static final Object UNKEYED = "steps of no validation";
  private static final Comparator<Step> ORDER =
      Comparator.comparingLong(Step::validation).thenComparingLong(Step::arrival);

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition stepsWaiting = lock.newCondition();
  /** Lanes with waiting steps, by key; a lane leaves when its last step is taken. */
  private final Map<Object, Lane> lanes = new HashMap<>();
  /** The same lanes in the order they get their next turn. */
  private final ArrayDeque<Lane> turns = new ArrayDeque<>();
  private final int capacity;
  private final AtomicLong validations = new AtomicLong();
  private int queued;
  private long arrivals;
  private boolean stopped;

  ValidationThreads(int threadCount, int capacity) {
    this.capacity = capacity;
    for (int i = 1; i <= threadCount; i++) {
      Thread t = new Thread(this::work, NAME + i);
      t.setDaemon(true);
      t.start();
    }
  }

  /** The process's validation threads. */
  static ValidationThreads shared() {
    return SHARED;
  }

  /** Whether the running thread is one of the validation threads. */
  static boolean current() {
    return Thread.currentThread().getName().startsWith(NAME);
  }

  /**
   * The validation threads for the steps of an upstream whose every answer is validated next (a
   * resolving group's walk): its answer is then validated on the thread that finished it instead
   * of being handed to another. When their queue is full the step runs on the JVM's common pool,
   * never refused: an upstream's step has no validation outcome to fail with.
   */
  static Executor forUpstreamSteps() {
    return step -> {
      try {
        SHARED.execute(step);
      } catch (RejectedExecutionException e) {
        ForkJoinPool.commonPool().execute(step);
      }
    };
  }

  /**
   * Where the steps of one new validation of {@code name} run: the lane of the zone the name sits
   * in, after the steps of validations there that began before it.
   */
  Validation validationOf(Name name) {
    Name zone = name.labels() > 2 ? new Name(name, 1) : name;
    return new Validation(zone, validations.incrementAndGet());
  }

  /** A step of no one validation: in the lane of such steps, in arrival order. */
  @Override
  public void execute(Runnable step) {
    submit(UNKEYED, 0, step);
  }

  /** Ends the threads once the steps running now are done; waiting steps are dropped (tests). */
  void stop() {
    lock.lock();
    try {
      stopped = true;
      stepsWaiting.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void submit(Object key, long validation, Runnable step) {
    lock.lock();
    try {
      if (stopped || queued >= capacity) {
        throw new RejectedExecutionException("validation queue full (" + capacity + " steps waiting)");
      }
      Lane lane = lanes.computeIfAbsent(key, Lane::new);
      if (lane.steps.isEmpty()) {
        turns.addLast(lane);
      }
      lane.steps.add(new Step(validation, arrivals++, step));
      queued++;
      stepsWaiting.signal();
    } finally {
      lock.unlock();
    }
  }

  private void work() {
    while (true) {
      Runnable step;
      lock.lock();
      try {
        while (turns.isEmpty() && !stopped) {
          stepsWaiting.awaitUninterruptibly();
        }
        if (stopped) {
          return;
        }
        Lane lane = turns.pollFirst();
        step = lane.steps.poll().run();
        queued--;
        if (lane.steps.isEmpty()) {
          lanes.remove(lane.key);
        } else {
          turns.addLast(lane);
        }
      } finally {
        lock.unlock();
      }
      try {
        step.run();
      } catch (RuntimeException | Error e) {
        // A completion stage's step keeps its failure in its stage; this is one that did not.
        log.warn("a validation step failed outside its stage", e);
      }
    }
  }

  /** The executor of one validation's steps (its key fetches, checks and verdict). */
  final class Validation implements Executor {
    private final Object zone;
    private final long order;

    private Validation(Object zone, long order) {
      this.zone = zone;
      this.order = order;
    }

    @Override
    public void execute(Runnable step) {
      submit(zone, order, step);
    }
  }

  private record Step(long validation, long arrival, Runnable run) {}

  private static final class Lane {
    final Object key;
    final PriorityQueue<Step> steps = new PriorityQueue<>(ORDER);

    Lane(Object key) {
      this.key = key;
    }
  }
}

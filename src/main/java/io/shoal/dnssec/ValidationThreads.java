package io.shoal.dnssec;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads DNSSEC validation runs on (signature checks, the validator's steps between key
 * fetches): one per core, shared by every upstream group, with a bounded queue. Validation is CPU
 * work, so more threads than cores would not finish it sooner; its own threads keep it off the
 * threads that read sockets, off the actors' dispatchers and off the JVM's common pool, which
 * other parts use. When the queue is full (a flood of misses in signed zones faster than the
 * cores can check), the step is refused at once: that validation ends as indeterminate (SERVFAIL
 * with EDE 22, or a stale answer) instead of holding every later one behind it.
 */
final class ValidationThreads {
  /** Steps that may wait beyond the running ones; each is short (a few signature checks at most). */
  static final int QUEUE = 10_000;

  private static final String NAME = "shoal-dnssec-";
  private static final Executor SHARED = create(Math.max(2, Runtime.getRuntime().availableProcessors()), QUEUE);

  private ValidationThreads() {}

  /** The process's validation threads. */
  static Executor shared() {
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

  static ThreadPoolExecutor create(int threads, int queue) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(queue), r -> {
          Thread t = new Thread(r, NAME + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.AbortPolicy());
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}

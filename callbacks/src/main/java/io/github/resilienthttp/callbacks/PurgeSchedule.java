package io.github.resilienthttp.callbacks;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;

/**
 * A periodic {@link JdbcProcessingStore#purgeExpired()} from
 * {@link JdbcProcessingStore#startPurging(ScheduledExecutorService, Duration)}: one purge at a time, a
 * purge that throws (the database is down) is logged ({@link System.Logger}) and counted and the
 * schedule goes on (a task that throws would silently end a {@code ScheduledExecutorService}
 * schedule), and {@link #stop} ends it gracefully. Thread-safe.
 */
public final class PurgeSchedule implements AutoCloseable {
  private static final System.Logger log = System.getLogger(PurgeSchedule.class.getName());

  private final String name;
  private final IntSupplier purge;
  private final ReentrantLock running = new ReentrantLock();
  private final AtomicLong purged = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private volatile boolean stopped;
  private volatile ScheduledFuture<?> future;

  private PurgeSchedule(String name, IntSupplier purge) {
    this.name = name;
    this.purge = purge;
  }

  static PurgeSchedule start(ScheduledExecutorService executor, Duration period, String name,
      IntSupplier purge) {
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(period, "period");
    if (period.compareTo(Duration.ofMillis(1)) < 0 || period.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException("period: " + period + " is not 1 ms to 24 h");
    }
    PurgeSchedule s = new PurgeSchedule(name, purge);
    s.future = executor.scheduleWithFixedDelay(s::runOnce, 0, period.toNanos(),
        TimeUnit.NANOSECONDS);
    return s;
  }

  private void runOnce() {
    if (stopped || !running.tryLock()) {
      return;
    }
    try {
      purged.addAndGet(purge.getAsInt());
    } catch (RuntimeException e) {
      failures.incrementAndGet();
      log.log(Level.ERROR, name + ": a purge failed; the next one runs as scheduled", e);
    } finally {
      running.unlock();
    }
  }

  /**
   * Stops scheduling purges and waits for a running one to end.
   *
   * @param timeout how long to wait, at least 0
   * @return whether no purge is running any more
   * @throws InterruptedException when interrupted while waiting
   */
  public boolean stop(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout: " + timeout + " is negative");
    }
    stopped = true;
    ScheduledFuture<?> f = future;
    if (f != null) {
      f.cancel(false);
    }
    if (running.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      running.unlock();
      return true;
    }
    return false;
  }

  /** {@return whether {@link #stop} was called} */
  public boolean isStopped() {
    return stopped;
  }

  /** {@return rows deleted by the purges of this schedule so far} */
  public long purged() {
    return purged.get();
  }

  /** {@return purges of this schedule that threw} */
  public long failures() {
    return failures.get();
  }

  /** Stops and waits up to 30 s; restores the interrupt flag when interrupted. */
  @Override
  public void close() {
    try {
      stop(Duration.ofSeconds(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "PurgeSchedule{" + name + ", purged=" + purged + (stopped ? ", stopped}" : "}");
  }
}

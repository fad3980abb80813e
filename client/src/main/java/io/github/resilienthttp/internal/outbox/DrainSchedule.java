package io.github.resilienthttp.internal.outbox;

import io.github.resilienthttp.OutboxResumer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link OutboxResumer#start}: a fixed-delay task that runs one drain at a time, survives a drain
 * that throws (a task that throws would end a {@code ScheduledExecutorService} schedule silently), and
 * stops gracefully: no new drain, the running one asked to stop after its current intent, then
 * waited for. Not API.
 */
public final class DrainSchedule implements OutboxResumer.Schedule {
  private static final Logger log = LoggerFactory.getLogger(DrainSchedule.class);
  private static final Duration MAX_PERIOD = Duration.ofHours(24);

  private final String name;
  private final Function<BooleanSupplier, ?> drain;
  private final ReentrantLock running = new ReentrantLock();
  private volatile boolean stopped;
  private volatile ScheduledFuture<?> future;

  private DrainSchedule(String name, Function<BooleanSupplier, ?> drain) {
    this.name = name;
    this.drain = drain;
  }

  /**
   * Starts draining now, then {@code period} after each drain ends.
   *
   * @param executor where drains run
   * @param period 1 ms to 24 h
   * @param name for the log
   * @param drain one drain, given "keep going" (false once stopped)
   * @return the schedule
   */
  public static DrainSchedule start(ScheduledExecutorService executor, Duration period, String name,
      Function<BooleanSupplier, ?> drain) {
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(period, "period");
    if (period.compareTo(Duration.ofMillis(1)) < 0 || period.compareTo(MAX_PERIOD) > 0) {
      throw new IllegalArgumentException("period: " + period + " is not 1 ms to 24 h");
    }
    DrainSchedule s = new DrainSchedule(name, drain);
    s.future = executor.scheduleWithFixedDelay(s::runOnce, 0, period.toNanos(),
        TimeUnit.NANOSECONDS);
    return s;
  }

  private void runOnce() {
    if (stopped || !running.tryLock()) {
      return;
    }
    try {
      drain.apply(() -> !stopped);
    } catch (RuntimeException e) {
      // The next drain may find the database back: log, and keep the schedule.
      log.error("{}: a drain failed; the next one runs as scheduled", name, e);
    } finally {
      running.unlock();
    }
  }

  @Override
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

  @Override
  public boolean isStopped() {
    return stopped;
  }

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
    return "DrainSchedule{" + name + (stopped ? ", stopped}" : "}");
  }
}

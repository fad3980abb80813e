package io.github.resilienthttp;

import io.github.resilienthttp.internal.engine.SystemTimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Future;

/**
 * The clock and sleeper seam of the SDK: every reading of time and every wait between attempts goes
 * through one {@code TimeSource}, so tests can replace real time with a fake one and be exact and fast.
 *
 * <p>{@link #nanoTime()} measures the operation deadline (monotonic, like {@link System#nanoTime()});
 * {@link #now()} is the wall clock used to resolve an HTTP-date {@code Retry-After} (RFC 9110 §10.2.3);
 * {@link #sleep(Duration)} is the wait between attempts.
 *
 * <p>Implementations must be thread-safe: one client shares its time source between all operations.
 */
public interface TimeSource {

  /**
   * Monotonic time in nanoseconds; only differences between two readings are meaningful.
   *
   * @return the current monotonic time in nanoseconds
   */
  long nanoTime();

  /**
   * The current wall-clock instant.
   *
   * @return the current wall-clock instant
   */
  Instant now();

  /**
   * Blocks the calling thread for {@code duration} (never negative).
   *
   * @param duration how long to wait
   * @throws InterruptedException when the thread is interrupted while waiting; the SDK then stops the
   *     operation and throws {@link OperationInterruptedException}
   */
  void sleep(Duration duration) throws InterruptedException;

  /**
   * Blocks the calling thread for {@code duration}, or until {@code wakeUp} completes, whichever
   * comes first: the wait between attempts, which {@link Operation#cancel()} cuts short by
   * completing {@code wakeUp}. Returns normally in both cases; the SDK looks at why.
   *
   * <p>The default implementation ignores {@code wakeUp} and calls {@link #sleep(Duration)}: a
   * cancelled operation then stops only after the wait. Override it (as the system time source does) to
   * make cancel immediate; a fake time source that never blocks needs not.
   *
   * @param duration how long to wait at most (never negative)
   * @param wakeUp completes when the wait should end early; never {@code null}
   * @throws InterruptedException when the thread is interrupted while waiting
   */
  default void sleep(Duration duration, Future<?> wakeUp) throws InterruptedException {
    sleep(duration);
  }

  /**
   * The real clock: {@link System#nanoTime()}, {@link Instant#now()} and {@link Thread#sleep(long, int)}.
   *
   * @return the system time source
   */
  static TimeSource system() {
    return SystemTimeSource.INSTANCE;
  }
}

package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The real {@link TimeSource}. Stateless. */
public final class SystemTimeSource implements TimeSource {
  public static final SystemTimeSource INSTANCE = new SystemTimeSource();

  private SystemTimeSource() {}

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public Instant now() {
    return Instant.now();
  }

  @Override
  public void sleep(Duration duration) throws InterruptedException {
    if (duration.isNegative() || duration.isZero()) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      return;
    }
    long nanos = duration.toNanos();
    Thread.sleep(nanos / 1_000_000L, (int) (nanos % 1_000_000L));
  }

  @Override
  public void sleep(Duration duration, Future<?> wakeUp) throws InterruptedException {
    if (duration.isNegative() || duration.isZero() || wakeUp.isDone()) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      return;
    }
    try {
      wakeUp.get(DurationMath.toNanos(duration), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException | CancellationException e) {
      // Slept the whole duration, or woken: either way the wait is over.
    }
  }

  @Override
  public String toString() {
    return "TimeSource.system()";
  }
}

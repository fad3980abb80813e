package io.github.resilienthttp.testkit;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link TimeSource} for tests: time stands still until a test {@link #advance(Duration) advances}
 * it or the SDK {@link #sleep(Duration) sleeps}, which advances it at once by the requested amount and
 * records the wait. Backoff and {@code Retry-After} tests thus run instantly and can assert every
 * wait exactly.
 *
 * <p>Thread-safe. Sleeping still honours interrupts: a thread whose interrupt flag is set gets an
 * {@link InterruptedException}, as with {@link Thread#sleep(long)}.
 */
public final class FakeTimeSource implements TimeSource {
  private final AtomicLong nanos = new AtomicLong();
  private final Instant epoch;
  private final List<Duration> sleeps = new ArrayList<>();

  /** Starts at wall-clock {@code 2026-01-01T00:00:00Z}. */
  public FakeTimeSource() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  /**
   * Starts at wall-clock {@code start}.
   *
   * @param start the wall-clock instant at nano time 0
   */
  public FakeTimeSource(Instant start) {
    this.epoch = start;
  }

  @Override
  public long nanoTime() {
    return nanos.get();
  }

  @Override
  public Instant now() {
    return epoch.plusNanos(nanos.get());
  }

  @Override
  public void sleep(Duration duration) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before a fake sleep of " + duration);
    }
    synchronized (sleeps) {
      sleeps.add(duration);
    }
    nanos.addAndGet(duration.toNanos());
  }

  /**
   * Moves time forward by {@code duration}, without recording a sleep.
   *
   * @param duration how far, not negative
   */
  public void advance(Duration duration) {
    nanos.addAndGet(duration.toNanos());
  }

  /** {@return every wait the SDK asked for, in order} */
  public List<Duration> sleeps() {
    synchronized (sleeps) {
      return List.copyOf(sleeps);
    }
  }

  /** {@return time elapsed since creation: every sleep and advance} */
  public Duration elapsed() {
    return Duration.ofNanos(nanos.get());
  }
}

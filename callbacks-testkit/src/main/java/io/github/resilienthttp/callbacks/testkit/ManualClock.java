package io.github.resilienthttp.callbacks.testkit;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock that moves only when told to: inject it into verifiers, stores and the sender so that
 * tolerance, leases and retention are exact in tests. {@link #sleeper()} advances it instead of
 * blocking.
 *
 * <p>Thread-safe.
 */
public final class ManualClock implements InstantSource {
  private final AtomicReference<Instant> now;

  /**
   * Starts at {@code start}.
   *
   * @param start the first reading
   */
  public ManualClock(Instant start) {
    this.now = new AtomicReference<>(Objects.requireNonNull(start, "start"));
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  /**
   * Moves the clock forward (or back, with a negative duration).
   *
   * @param duration how far
   * @return the new reading
   */
  public Instant advance(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    return now.updateAndGet(t -> t.plus(duration));
  }

  /**
   * Sets the clock.
   *
   * @param instant the new reading
   */
  public void set(Instant instant) {
    now.set(Objects.requireNonNull(instant, "instant"));
  }

  /** {@return a sleeper that advances this clock by the requested duration and returns at once} */
  public Sleeper sleeper() {
    return this::advance;
  }

  @Override
  public String toString() {
    return "ManualClock{" + now.get() + "}";
  }
}

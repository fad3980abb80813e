package io.github.resilienthttp.callbacks.testkit;

import java.time.Duration;

/** How {@link CallbackSender} waits between attempts and before delayed deliveries. */
@FunctionalInterface
public interface Sleeper {
  /**
   * Waits.
   *
   * @param duration how long, never negative
   * @throws InterruptedException when interrupted
   */
  void sleep(Duration duration) throws InterruptedException;

  /** {@return a sleeper that blocks the thread for real} */
  static Sleeper system() {
    return duration -> Thread.sleep(duration.toMillis(), (int) (duration.toNanosPart() % 1_000_000));
  }
}

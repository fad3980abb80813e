package io.github.resilienthttp;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * What the lifecycle and engine tests use to catch an operation while it waits: listeners that
 * count a latch down when a wait is scheduled, and a 202 wait that stays between polls. Test code
 * only.
 */
final class WaitSignals {
  /** A 202 wait whose polls may be two minutes apart, within five: waiting while a test looks. */
  static final AsyncOperationPolicy LONG_POLLS = AsyncOperationPolicy.builder()
      .maxPollInterval(Duration.ofMinutes(2)).deadline(Duration.ofMinutes(5)).build();

  private WaitSignals() {}

  /** {@return a listener that counts {@code latch} down when a retry's backoff is scheduled} */
  static OperationListener retryScheduled(CountDownLatch latch) {
    return new OperationListener() {
      @Override
      public void retryScheduled(OperationInfo operation, int nextAttempt, Duration delay,
          boolean fromRetryAfter) {
        latch.countDown();
      }
    };
  }

  /** {@return a listener that counts {@code latch} down when a 202 wait's poll is scheduled} */
  static OperationListener pollScheduled(CountDownLatch latch) {
    return new OperationListener() {
      @Override
      public void pollScheduled(OperationInfo operation, int poll, Duration delay,
          boolean fromRetryAfter) {
        latch.countDown();
      }
    };
  }
}

package io.github.resilienthttp.examples;

import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationResult;
import io.github.resilienthttp.internal.engine.Listeners;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts what the SDK did from its {@link OperationListener} events, the way an application feeds
 * its metrics. Listeners are called on the threads running operations, possibly many at once, so
 * the counters are atomic.
 */
final class CountingListener implements OperationListener, ClientCounts {
  private final AtomicInteger operations = new AtomicInteger();
  private final AtomicInteger succeeded = new AtomicInteger();
  private final AtomicInteger attempts = new AtomicInteger();
  private final AtomicInteger retries = new AtomicInteger();
  private final AtomicInteger replays = new AtomicInteger();
  private final AtomicInteger outcomeUnknown = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();

  @Override
  public void operationStarted(OperationInfo operation) {
    operations.incrementAndGet();
  }

  @Override
  public void attemptStarted(OperationInfo operation, int attempt) {
    attempts.incrementAndGet();
    if (attempt > 1) {
      retries.incrementAndGet();
    }
  }

  @Override
  public void replayDetected(OperationInfo operation, int attempt) {
    replays.incrementAndGet();
  }

  @Override
  public void operationEnded(OperationInfo operation, OperationResult result) {
    switch (result.outcome()) {
      case SUCCESS -> succeeded.incrementAndGet();
      case OUTCOME_UNKNOWN -> outcomeUnknown.incrementAndGet();
      default -> failed.incrementAndGet();
    }
  }

  @Override
  public int operations() {
    return operations.get();
  }

  @Override
  public int succeeded() {
    return succeeded.get();
  }

  @Override
  public int attempts() {
    return attempts.get();
  }

  @Override
  public int retries() {
    return retries.get();
  }

  @Override
  public int replays() {
    return replays.get();
  }

  @Override
  public int outcomeUnknown() {
    return outcomeUnknown.get();
  }

  @Override
  public int failed() {
    return failed.get();
  }
}

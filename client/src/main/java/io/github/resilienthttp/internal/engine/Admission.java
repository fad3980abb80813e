package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.internal.guard.BulkheadGate;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * One attempt's wait for a bulkhead permit, the same for the three drivers: how long it may wait
 * (up to the deadline's floor), what a refusal is (the bulkhead's, or the deadline's when the wait
 * was cut by it, or the cancel's), and that a granted permit becomes the attempt's to release
 * ({@link AttemptPermits}). The blocking driver waits on its thread ({@link #awaitBlocking}); the
 * async and hedging drivers get a grant ({@link #begin}) and continue when it completes. Not API.
 */
final class Admission {
  private final RetryLoop loop;
  private final BulkheadGate gate;
  private final long waitStart = System.nanoTime();
  private final long allowedNanos;
  private final CompletableFuture<Boolean> grant;

  private Admission(RetryLoop loop, BulkheadGate gate, long remainingNanos) {
    this.loop = loop;
    this.gate = gate;
    this.allowedNanos = RetryLoop.bulkheadWaitNanos(remainingNanos);
    this.grant = gate.acquireAsync(allowedNanos, loop.client.scheduler());
  }

  /**
   * Asks for a permit without holding a thread.
   *
   * @param remainingNanos the time left before the deadline
   * @return the pending admission, or {@code null} when the client has no bulkhead
   */
  static Admission begin(RetryLoop loop, long remainingNanos) {
    BulkheadGate gate = loop.client.bulkheadGate();
    return gate == null ? null : new Admission(loop, gate, remainingNanos);
  }

  /**
   * Waits for a permit on the calling thread (no-op without a bulkhead); a cancel wakes it.
   *
   * @return the time left before the deadline after the wait
   * @throws IOException the refusal, the cancel, or the interrupt (its flag set again)
   */
  static long awaitBlocking(RetryLoop loop, long remainingNanos) throws IOException {
    BulkheadGate gate = loop.client.bulkheadGate();
    if (gate == null) {
      return remainingNanos;
    }
    long waitStart = System.nanoTime();
    long allowed = RetryLoop.bulkheadWaitNanos(remainingNanos);
    boolean admitted;
    try {
      admitted = loop.permits().acquireBulkhead(allowed, loop.op::cancelSignal);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw loop.interrupted();
    }
    if (!admitted) {
      throw loop.bulkheadRejected(System.nanoTime() - waitStart, gate.cutByDeadline(allowed));
    }
    loop.checkNotCanceled();
    return loop.op.remainingNanos();
  }

  boolean isDone() {
    return grant.isDone();
  }

  /** Runs {@code next} when the wait is over (granted, timed out, given up, or refused). */
  void whenDone(Runnable next) {
    grant.whenComplete((granted, error) -> next.run());
  }

  /** Gives the wait up (a cancel, the deadline): it completes as not granted. */
  void giveUp() {
    gate.giveUp(grant);
  }

  /**
   * After the wait: whether a permit was granted; a granted one is the attempt's from now on.
   *
   * @throws IOException when the user's scheduler refused the wait's timeout
   */
  boolean granted() throws IOException {
    boolean granted;
    try {
      granted = grant.join();
    } catch (RuntimeException e) { // CompletionException: the user's scheduler refused the timeout
      throw loop.schedulerRejected("the bulkhead wait's timeout", e.getCause());
    }
    if (granted) {
      loop.permits().bulkheadGranted();
    }
    return granted;
  }

  /** The failure of a wait that was not granted. */
  IOException refusal() {
    return loop.bulkheadRejected(System.nanoTime() - waitStart, gate.cutByDeadline(allowedNanos));
  }
}

package io.github.resilienthttp.internal.outbox;

import io.github.resilienthttp.AsyncOperationFailedException;
import io.github.resilienthttp.BulkheadFullException;
import io.github.resilienthttp.CircuitBreakerOpenException;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.KeyRetentionExceededException;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationInterruptedException;
import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutboxEntry;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.PollFailedException;
import io.github.resilienthttp.ResumableFailure;
import io.github.resilienthttp.ResumeToken;
import io.github.resilienthttp.RetriesExhaustedException;
import io.github.resilienthttp.RetryBudgetExhaustedException;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.KeyDecision;
import java.io.IOException;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Parks the intent of an operation that ended without a definite outcome in its {@link Outbox}
 * ({@link Operation#parkIndefiniteOutcomes(Outbox)}), and says so: a listener event and a log line,
 * so that nothing is dropped silently. Not API.
 */
public final class OutboxExit {
  private static final Logger log = LoggerFactory.getLogger(OutboxExit.class);

  private OutboxExit() {}

  /**
   * Whether {@code e} leaves the intent open: it may have happened, or did not happen for a reason
   * that passes (budget, breaker, bulkhead, deadline, network). A definite failure (the server said
   * no, the asynchronous job failed, a cancel by the caller) is not parked.
   */
  public static boolean indefinite(IOException e) {
    if (e instanceof AsyncOperationFailedException || e instanceof KeyRetentionExceededException) {
      return false;
    }
    if (e instanceof OperationFailure f && f.reason().equals("canceled")) {
      return false;
    }
    return e instanceof OutcomeUnknownException || e instanceof DeadlineExceededException
        || e instanceof RetryBudgetExhaustedException || e instanceof CircuitBreakerOpenException
        || e instanceof BulkheadFullException || e instanceof RetriesExhaustedException
        || e instanceof PollFailedException || e instanceof OperationInterruptedException;
  }

  /** Parks {@code e}'s intent when it is indefinite; returns {@code e} to be thrown. */
  public static IOException park(ClientRuntime runtime, Outbox outbox, Operation op, Instant keyCreatedAt,
      IOException e) {
    if (!indefinite(e)) {
      return e;
    }
    ResumeToken token = ResumableFailure.of(e).orElseGet(() -> runtime.signed(ResumeToken.forSubmit(
        op.request().method(), op.request().url(), op.idempotencyKey(), op.idempotencyKeySent(),
        keyCreatedAt)));
    String reason = e instanceof OperationFailure f ? f.reason() : "unknown";
    Instant now = runtime.timeSource().now();
    OutboxEntry entry = new OutboxEntry(token, reason, now, 0, now);
    try {
      outbox.park(entry);
    } catch (RuntimeException parkFailure) {
      // The outbox is down: the caller still gets the operation's failure, with this one attached.
      e.addSuppressed(parkFailure);
      log.error("could not park {} ({}) in the outbox", token, reason, parkFailure);
      return e;
    }
    OperationInfo info = KeyDecision.info(token);
    runtime.listeners().send("operationParked", l -> l.operationParked(info, entry));
    log.warn("parked {} in the outbox: {}", token, reason);
    return e;
  }
}

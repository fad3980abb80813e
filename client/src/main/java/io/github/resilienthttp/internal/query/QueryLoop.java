package io.github.resilienthttp.internal.query;

import static io.github.resilienthttp.internal.util.Floors.MIN_ATTEMPT_NANOS;
import static io.github.resilienthttp.internal.util.Floors.unwrap;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OutcomeQuery;
import io.github.resilienthttp.OutcomeQueryPolicy;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.RetriesExhaustedException;
import io.github.resilienthttp.RetryBudgetExhaustedException;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.KeyDecision;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Settles an operation's unknown outcome with its {@link OutcomeQuery} ({@link OutcomeQueryPolicy}
 * says what each answer does): runs the operation; on {@link OutcomeUnknownException}, waits the
 * grace delay, queries inside the deadline, and returns the found result, re-sends (the same key,
 * sent or not as before), or rethrows. Queries and re-sends are {@link Operation}s of their own,
 * with the time left as their deadline. One loop per operation. Not API.
 */
public final class QueryLoop {
  private static final int MAX_BODY = 64 * 1024;

  /** The blocking run of an operation. */
  public interface Run {
    /**
     * Runs the operation's attempts.
     *
     * @return the final response
     * @throws IOException the operation's failure
     */
    Response run() throws IOException;
  }

  private final ClientRuntime runtime;
  private final OutcomeQueryPolicy policy;
  private final Request original;
  private final String key;
  private final boolean keySent;
  private final long deadlineNanos;
  private final OperationInfo info;
  private volatile boolean canceled;
  private final CompletableFuture<Void> cancelSignal = new CompletableFuture<>();
  /** The query or re-send in flight: {@link #cancel()} cancels it. */
  private volatile Operation current;
  private final UnaryOperator<Response> markFound;

  /**
   * The loop of one operation.
   *
   * @param runtime the client's runtime
   * @param policy the query policy
   * @param op the operation whose outcome the loop settles
   * @param deadline the operation's own deadline, or {@code null} for the retry policy's
   * @param markFound marks a response found by the query ({@link OutcomeQuery#foundByQuery})
   */
  public QueryLoop(ClientRuntime runtime, OutcomeQueryPolicy policy, Operation op,
      Duration deadline, UnaryOperator<Response> markFound) {
    this.runtime = runtime;
    this.policy = policy;
    this.original = op.request();
    this.key = op.idempotencyKey();
    this.keySent = op.idempotencyKeySent();
    Duration d = deadline != null ? deadline : runtime.retryPolicy().deadline();
    this.deadlineNanos = runtime.timeSource().nanoTime() + d.toNanos();
    this.info = KeyDecision.info(key, keySent, original.method(), original.url());
    this.markFound = markFound;
  }

  /** Stops the query or re-send in flight; none starts after this. Thread-safe. */
  public void cancel() {
    canceled = true;
    cancelSignal.complete(null);
    Operation c = current;
    if (c != null) {
      c.cancel();
    }
  }

  private void checkCanceled(OutcomeUnknownException unknown) throws IOException {
    if (canceled) {
      unknown.addSuppressed(new ResilientHttpException("operation canceled before its outcome"
          + " was settled", key, keySent, unknown.attempts(), "canceled", null));
      throw unknown;
    }
  }

  /**
   * Runs {@code first} and settles an unknown outcome, blocking.
   *
   * @param first the operation's own attempts
   * @return the final response, or the one the query found
   * @throws IOException the operation's failure when it cannot be settled
   */
  public Response execute(Run first) throws IOException {
    OutcomeUnknownException unknown;
    try {
      return first.run();
    } catch (OutcomeUnknownException e) {
      if (!queryable(e)) {
        throw e;
      }
      unknown = e;
    }
    for (int resends = 0; ; resends++) {
      Response found = query(unknown);
      if (found != null) {
        return found;
      }
      Operation again = resend(unknown, resends);
      try {
        return again.execute();
      } catch (OutcomeUnknownException e) {
        if (!queryable(e)) {
          throw e;
        }
        unknown = e;
      }
    }
  }

  /**
   * Runs {@code first} and settles an unknown outcome without holding a thread.
   *
   * @param first starts the operation's own attempts
   * @return the future of the final response, or of the one the query found
   */
  public CompletableFuture<Response> executeAsync(Supplier<CompletableFuture<Response>> first) {
    return settleAsync(first.get(), 0);
  }

  private CompletableFuture<Response> settleAsync(CompletableFuture<Response> attempt,
      int resends) {
    return attempt.exceptionallyCompose(e -> {
      Throwable cause = unwrap(e);
      if (!(cause instanceof OutcomeUnknownException unknown) || !queryable(unknown)) {
        return CompletableFuture.failedFuture(cause);
      }
      // Every wait is scheduled and every GET enqueued: no thread is held while the outcome is
      // settled (the grace delay on the scheduler, which a cancel cuts short).
      CompletableFuture<Void> grace = new CompletableFuture<>();
      try {
        checkGraceFits(unknown);
        ScheduledFuture<?> timer = runtime.scheduler().schedule(() -> grace.complete(null),
            policy.graceDelay().toNanos(), TimeUnit.NANOSECONDS);
        cancelSignal.whenComplete((v, x) -> {
          timer.cancel(false);
          grace.complete(null);
        });
      } catch (IOException io) {
        return CompletableFuture.failedFuture(io);
      } catch (RejectedExecutionException rejected) {
        unknown.addSuppressed(rejected);
        return CompletableFuture.failedFuture(unknown);
      }
      return grace.thenComposeAsync(v -> {
        Operation q;
        try {
          q = queryOperation(unknown);
        } catch (IOException io) {
          return CompletableFuture.failedFuture(io);
        }
        return q.executeAsync().handle((r, qe) -> {
          try {
            Response found = qe == null ? read(r, unknown) : cannotTell(unknown, unwrap(qe));
            return found != null ? CompletableFuture.completedFuture(found)
                : settleAsync(resend(unknown, resends).executeAsync(), resends + 1);
          } catch (IOException io) {
            return CompletableFuture.<Response>failedFuture(io);
          }
        }).thenCompose(f -> f);
      }, runtime.wrapped().dispatcher().executorService());
    });
  }

  private static boolean queryable(OutcomeUnknownException e) {
    return !e.reason().equals("interrupted") && !e.reason().equals("canceled");
  }

  /** The found result, or {@code null} when not found; throws {@code unknown} when it cannot tell. */
  private Response query(OutcomeUnknownException unknown) throws IOException {
    checkGraceFits(unknown);
    try {
      runtime.timeSource().sleep(policy.graceDelay(), cancelSignal);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      unknown.addSuppressed(e);
      throw unknown;
    }
    Operation q = queryOperation(unknown);
    Response r;
    try {
      r = q.execute();
    } catch (IOException e) {
      return cannotTell(unknown, e);
    }
    return read(r, unknown);
  }

  /** Throws {@code unknown} when the grace delay would leave no time for the query. */
  private void checkGraceFits(OutcomeUnknownException unknown) throws IOException {
    if (remainingNanos() - policy.graceDelay().toNanos() < MIN_ATTEMPT_NANOS) {
      unknown.addSuppressed(new DeadlineExceededException("no time left for the outcome query",
          key, keySent, unknown.attempts(), "deadline", null));
      report(OutcomeQuery.Answer.CANNOT_TELL);
      throw unknown;
    }
  }

  /** The query's own operation, with the time left as its deadline. */
  private Operation queryOperation(OutcomeUnknownException unknown) throws IOException {
    long remaining = remainingNanos();
    if (remaining < MIN_ATTEMPT_NANOS) {
      report(OutcomeQuery.Answer.CANNOT_TELL);
      throw unknown;
    }
    // The caller wrote the query's URL; its redirects may not leave that URL's origin.
    Operation q = runtime.newOperation(io.github.resilienthttp.internal.async.FollowUpCalls
        .sameOriginOnly(policy.query().request(original, key)), AttemptKind.QUERY)
        .idempotencyKey(key).sendIdempotencyKey(false).deadline(Duration.ofNanos(remaining));
    checkCanceled(unknown);
    current = q;
    if (canceled) {
      q.cancel();
    }
    return q;
  }

  /** The query failed: it cannot tell; throws {@code unknown}. */
  private Response cannotTell(OutcomeUnknownException unknown, Throwable queryFailure)
      throws IOException {
    unknown.addSuppressed(queryFailure);
    report(OutcomeQuery.Answer.CANNOT_TELL);
    throw unknown;
  }

  /** Reads the query's answer: the found result, {@code null} when not found, or throws. */
  private Response read(Response r, OutcomeUnknownException unknown) throws IOException {
    boolean keep = false;
    try {
      OutcomeQuery.Answer answer = policy.query().read(r, r.peekBody(MAX_BODY).string());
      if (answer == null) {
        answer = OutcomeQuery.Answer.CANNOT_TELL;
      }
      report(answer);
      switch (answer) {
        case FOUND:
          keep = true;
          return markFound.apply(r);
        case NOT_FOUND:
          return null;
        default:
          throw unknown;
      }
    } catch (IOException e) {
      if (e != unknown) {
        unknown.addSuppressed(e);
      }
      throw unknown;
    } finally {
      if (!keep) {
        r.close();
      }
    }
  }

  /** The request again, after the query found it not done: a retry, paid from the budget. */
  private Operation resend(OutcomeUnknownException unknown, int resends) throws IOException {
    if (resends >= policy.maxResends()) {
      throw new RetriesExhaustedException("the outcome query found the request not done, and no"
          + " more re-sends are allowed", key, keySent, unknown.attempts(), "not-found-by-query",
          unknown);
    }
    if (!runtime.retryBudget().tryAcquireRetry()) {
      runtime.listeners().send("retryBudgetRefused",
          l -> l.retryBudgetRefused(info, unknown.attempts()));
      throw new RetryBudgetExhaustedException("the outcome query found the request not done; the"
          + " retry budget refused to send it again", key, keySent, unknown.attempts(),
          "retry-budget-exhausted", unknown);
    }
    long remaining = remainingNanos();
    if (remaining < MIN_ATTEMPT_NANOS) {
      throw new DeadlineExceededException("the outcome query found the request not done; no time"
          + " left to send it again", key, keySent, unknown.attempts(), "deadline", unknown);
    }
    Operation again = runtime.newOperation(original, AttemptKind.RETRY).idempotencyKey(key)
        .sendIdempotencyKey(keySent).deadline(Duration.ofNanos(remaining));
    checkCanceled(unknown);
    current = again;
    if (canceled) {
      again.cancel();
    }
    return again;
  }

  private void report(OutcomeQuery.Answer answer) {
    runtime.listeners().send("outcomeQueried", l -> l.outcomeQueried(info, answer));
  }

  private long remainingNanos() {
    return deadlineNanos - runtime.timeSource().nanoTime();
  }

}

package io.github.resilienthttp;

import io.github.resilienthttp.internal.engine.ClientRuntime;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Settles an operation's unknown outcome with its {@link OutcomeQuery} ({@link OutcomeQueryPolicy}
 * says what each answer does): runs the operation; on {@link OutcomeUnknownException}, waits the grace
 * delay, queries inside the deadline, and returns the found result, re-sends (the same key, sent or
 * not as before), or rethrows. Queries and re-sends are {@link Operation}s of their own, with the
 * time left as their deadline. One step per operation. Not API.
 */
final class OutcomeQueryStep {
  private static final long MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final int MAX_BODY = 64 * 1024;

  /** The blocking run of an operation. */
  interface Run {
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

  private OutcomeQueryStep(ClientRuntime runtime, OutcomeQueryPolicy policy, Operation op) {
    this.runtime = runtime;
    this.policy = policy;
    this.original = op.request();
    this.key = op.idempotencyKey();
    this.keySent = op.idempotencyKeySent();
    Duration d = op.deadlineOrNull() != null ? op.deadlineOrNull() : runtime.retryPolicy().deadline();
    this.deadlineNanos = runtime.timeSource().nanoTime() + d.toNanos();
    this.info = new OperationInfo(key, keySent,
        keySent || AttemptOutcome.isIdempotentMethod(original.method()), original.method(),
        original.url().host());
    op.queryStep(this);
  }

  /** Stops the query or re-send in flight; none starts after this. Thread-safe. */
  void cancel() {
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

  static Response execute(ClientRuntime runtime, OutcomeQueryPolicy policy, Operation op, Run first)
      throws IOException {
    OutcomeQueryStep step = new OutcomeQueryStep(runtime, policy, op);
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
      Response found = step.query(unknown);
      if (found != null) {
        return found;
      }
      Operation again = step.resend(unknown, resends);
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

  static CompletableFuture<Response> executeAsync(ClientRuntime runtime, OutcomeQueryPolicy policy,
      Operation op, Supplier<CompletableFuture<Response>> first) {
    OutcomeQueryStep step = new OutcomeQueryStep(runtime, policy, op);
    return step.settleAsync(first.get(), 0);
  }

  private CompletableFuture<Response> settleAsync(CompletableFuture<Response> attempt,
      int resends) {
    return attempt.exceptionallyCompose(e -> {
      Throwable cause = unwrap(e);
      if (!(cause instanceof OutcomeUnknownException unknown) || !queryable(unknown)) {
        return CompletableFuture.failedFuture(cause);
      }
      // The grace delay on the scheduler (no thread waits); the query then runs on the wrapped
      // client's dispatcher executor, never on the scheduler's one thread.
      CompletableFuture<Void> grace = new CompletableFuture<>();
      runtime.scheduler().schedule(() -> grace.complete(null), policy.graceDelay().toNanos(),
          TimeUnit.NANOSECONDS);
      return grace.thenComposeAsync(v -> {
        try {
          Response found = queryNow(unknown);
          if (found != null) {
            return CompletableFuture.completedFuture(found);
          }
          return settleAsync(resend(unknown, resends).executeAsync(), resends + 1);
        } catch (IOException io) {
          return CompletableFuture.failedFuture(io);
        }
      }, runtime.wrapped().dispatcher().executorService());
    });
  }

  private static boolean queryable(OutcomeUnknownException e) {
    return !e.reason().equals("interrupted") && !e.reason().equals("canceled");
  }

  /** The found result, or {@code null} when not found; throws {@code unknown} when it cannot tell. */
  private Response query(OutcomeUnknownException unknown) throws IOException {
    Duration grace = policy.graceDelay();
    if (remainingNanos() - grace.toNanos() < MIN_NANOS) {
      unknown.addSuppressed(new DeadlineExceededException("no time left for the outcome query",
          key, keySent, unknown.attempts(), "deadline", null));
      report(OutcomeQuery.Answer.CANNOT_TELL);
      throw unknown;
    }
    try {
      runtime.timeSource().sleep(grace, cancelSignal);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      unknown.addSuppressed(e);
      throw unknown;
    }
    return queryNow(unknown);
  }

  private Response queryNow(OutcomeUnknownException unknown) throws IOException {
    long remaining = remainingNanos();
    if (remaining < MIN_NANOS) {
      report(OutcomeQuery.Answer.CANNOT_TELL);
      throw unknown;
    }
    // The caller wrote the query's URL; its redirects may not leave that URL's origin.
    Operation q = new Operation(runtime, io.github.resilienthttp.internal.async.FollowUpCalls
        .sameOriginOnly(policy.query().request(original, key)))
        .idempotencyKey(key).sendIdempotencyKey(false).deadline(Duration.ofNanos(remaining));
    q.firstAttemptKind(AttemptKind.QUERY);
    checkCanceled(unknown);
    current = q;
    if (canceled) {
      q.cancel();
    }
    Response r;
    try {
      r = q.execute();
    } catch (IOException e) {
      unknown.addSuppressed(e);
      report(OutcomeQuery.Answer.CANNOT_TELL);
      throw unknown;
    }
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
          return r.newBuilder().request(r.request().newBuilder()
              .tag(OutcomeQuery.FoundByQuery.class, OutcomeQuery.FoundByQuery.INSTANCE).build())
              .build();
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
    if (remaining < MIN_NANOS) {
      throw new DeadlineExceededException("the outcome query found the request not done; no time"
          + " left to send it again", key, keySent, unknown.attempts(), "deadline", unknown);
    }
    Operation again = new Operation(runtime, original).idempotencyKey(key)
        .sendIdempotencyKey(keySent).deadline(Duration.ofNanos(remaining));
    again.firstAttemptKind(AttemptKind.RETRY);
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

  private static Throwable unwrap(Throwable e) {
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}

package io.github.resilienthttp.internal.query;

import static io.github.resilienthttp.internal.util.Floors.MIN_ATTEMPT_NANOS;

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
import io.github.resilienthttp.internal.async.FollowUpCalls;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.KeyDecision;
import io.github.resilienthttp.internal.engine.Run;
import io.github.resilienthttp.internal.engine.Step;
import io.github.resilienthttp.internal.engine.Steps;
import java.io.IOException;
import java.time.Duration;
import java.util.function.UnaryOperator;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Settles an operation's unknown outcome with its {@link OutcomeQuery} ({@link OutcomeQueryPolicy}
 * says what each answer does), as steps ({@link Steps}): runs the operation's attempts; on
 * {@link OutcomeUnknownException}, waits the grace delay, queries inside the deadline, and returns
 * the found result, re-sends (the same key, sent or not as before), or rethrows. Queries and
 * re-sends are {@link Operation}s of their own, with the time left as their deadline. Written once:
 * a {@link Run} drives it blocking or without a thread, under the run's one deadline and one cancel
 * signal. One machine per operation. Not API.
 */
public final class QueryLoop implements Steps {
  private static final int MAX_BODY = 64 * 1024;

  private enum Stage { ATTEMPT, GRACE, QUERY }

  private final ClientRuntime runtime;
  private final OutcomeQueryPolicy policy;
  private final Run run;
  private final Request original;
  private final String key;
  private final boolean keySent;
  private final OperationInfo info;
  private final UnaryOperator<Response> markFound;
  private Stage stage = Stage.ATTEMPT;
  private OutcomeUnknownException unknown;
  private int resends;

  /**
   * The steps of one operation.
   *
   * @param runtime the client's runtime
   * @param policy the query policy
   * @param run the run that owns them (its attempts are the first try)
   * @param original the operation's request, as given
   * @param key the operation's key
   * @param keySent whether the operation sends it
   * @param markFound marks a response found by the query ({@link OutcomeQuery#foundByQuery})
   */
  public QueryLoop(ClientRuntime runtime, OutcomeQueryPolicy policy, Run run, Request original,
      String key, boolean keySent, UnaryOperator<Response> markFound) {
    this.runtime = runtime;
    this.policy = policy;
    this.run = run;
    this.original = original;
    this.key = key;
    this.keySent = keySent;
    this.info = KeyDecision.info(key, keySent, original.method(), original.url());
    this.markFound = markFound;
  }

  @Override
  public Step start() {
    return Step.ATTEMPTS;
  }

  @Override
  public Step answered(Response r) throws IOException {
    if (stage == Stage.ATTEMPT) {
      return new Step.Done(r);
    }
    Response found = read(r, unknown);
    if (found != null) {
      return new Step.Done(found);
    }
    stage = Stage.ATTEMPT;
    return new Step.Send(resend(unknown, resends++));
  }

  @Override
  public Step failed(IOException e) throws IOException {
    if (stage == Stage.QUERY) {
      return cannotTell(unknown, e);
    }
    if (!(e instanceof OutcomeUnknownException u) || !queryable(u)) {
      throw e;
    }
    unknown = u;
    checkGraceFits(u);
    stage = Stage.GRACE;
    return new Step.Wait(policy.graceDelay());
  }

  @Override
  public Step waited() throws IOException {
    stage = Stage.QUERY;
    return new Step.Send(queryOperation(unknown));
  }

  @Override
  public IOException waitStopped(Exception cause) {
    unknown.addSuppressed(cause);
    return unknown;
  }

  @Override
  public IOException canceled() {
    return new ResilientHttpException("operation canceled", key, keySent,
        unknown == null ? 0 : unknown.attempts(), "canceled", null);
  }

  private void checkCanceled(OutcomeUnknownException unknown) throws IOException {
    if (run.isRunCanceled()) {
      unknown.addSuppressed(new ResilientHttpException("operation canceled before its outcome"
          + " was settled", key, keySent, unknown.attempts(), "canceled", null));
      throw unknown;
    }
  }

  private static boolean queryable(OutcomeUnknownException e) {
    // A closed client starts no query: the caller settles the outcome (with another client).
    return !e.reason().equals("interrupted") && !e.reason().equals("canceled")
        && !e.reason().equals(io.github.resilienthttp.internal.engine.ClientLifecycle.REASON);
  }

  /** Throws {@code unknown} when the grace delay would leave no time for the query. */
  private void checkGraceFits(OutcomeUnknownException unknown) throws IOException {
    if (run.remainingNanos() - policy.graceDelay().toNanos() < MIN_ATTEMPT_NANOS) {
      unknown.addSuppressed(new DeadlineExceededException("no time left for the outcome query",
          key, keySent, unknown.attempts(), "deadline", null));
      report(OutcomeQuery.Answer.CANNOT_TELL);
      throw unknown;
    }
  }

  /** The query's own operation, with the time left as its deadline. */
  private Operation queryOperation(OutcomeUnknownException unknown) throws IOException {
    long remaining = run.remainingNanos();
    if (remaining < MIN_ATTEMPT_NANOS) {
      report(OutcomeQuery.Answer.CANNOT_TELL);
      throw unknown;
    }
    // The caller wrote the query's URL; its redirects may not leave that URL's origin.
    Request query = FollowUpCalls.sameOriginOnly(policy.query().request(original, key));
    Operation q = runtime.newOperation(query, AttemptKind.QUERY).idempotencyKey(key).sendIdempotencyKey(false).deadline(Duration.ofNanos(remaining));
    checkCanceled(unknown);
    return q;
  }

  /** The query failed: it cannot tell; throws {@code unknown}. */
  private Step cannotTell(OutcomeUnknownException unknown, Throwable queryFailure)
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
    long remaining = run.remainingNanos();
    if (remaining < MIN_ATTEMPT_NANOS) {
      throw new DeadlineExceededException("the outcome query found the request not done; no time"
          + " left to send it again", key, keySent, unknown.attempts(), "deadline", unknown);
    }
    Operation again = runtime.newOperation(original, AttemptKind.RETRY).idempotencyKey(key)
        .sendIdempotencyKey(keySent).deadline(Duration.ofNanos(remaining));
    checkCanceled(unknown);
    return again;
  }

  private void report(OutcomeQuery.Answer answer) {
    runtime.listeners().send("outcomeQueried", l -> l.outcomeQueried(info, answer));
  }
}

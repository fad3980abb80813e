package io.github.resilienthttp.internal.engine;

import static io.github.resilienthttp.internal.util.Floors.MIN_ATTEMPT_NANOS;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationResult;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.RetryBudgetExhaustedException;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.internal.classify.AnswerInContext;
import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retry decisions of one operation, independent of how attempts are sent and waits are made:
 * the blocking {@link io.github.resilienthttp.internal.okhttp.RetryInterceptor} and the
 * non-blocking {@link AsyncDriver} drive the same loop, so {@code execute()} and
 * {@code executeAsync()} have the same semantics.
 *
 * <p>Per attempt, in order (as in .NET's standard resilience handler: total deadline, retry with
 * budget, circuit breaker, attempt timeout): {@link #beforeAttempt()} (interrupt, deadline, breaker
 * permission), the driver's bulkhead permit, {@link #startAttempt(long)}, the driver sends,
 * {@link #afterAttempt} (classification, breaker record, listeners, and the decision: return,
 * throw, or retry after a delay whose budget token is already taken), and the driver waits.
 *
 * <p>What an attempt's answer means is {@link AttemptJudge}'s; every exception the run ends with
 * is built by {@link Failures}, its base class (which also keeps what the run remembers for
 * them). This class keeps the steps and their order. It is one link of the chain that makes an
 * operation's one engine object ({@link Execution}, {@link Failures}, this, {@link Run}).
 *
 * <p>Not thread-safe: one driver calls it, one step at a time (the async driver's steps may run on
 * different threads, one after the other). Not API.
 */
public abstract class RetryLoop extends Failures implements ClientLifecycle.Stoppable {
  private static final Logger log = LoggerFactory.getLogger(RetryLoop.class);

  // Set by define(), before the first attempt.
  private boolean oneShot;
  private TargetCircuitBreakers.Target target;
  /** The target's adaptive overload state ({@link Admission}), or {@code null} when all are off. */
  private io.github.resilienthttp.internal.guard.TargetOverload.Target overload;
  /**
   * The attempt being set up (its permits being taken), in flight, or the last one; the permits it
   * holds are released by the drivers' finally.
   */
  private Attempt current;
  /** After {@link #afterAttempt} returned {@code null}: the wait before the next attempt. */
  private Duration retryDelay;
  /** A budget token was taken for a retry that has not started yet: refunded if it never does. */
  private boolean retryTokenHeld;
  /** The last decision's reason, and whether it was a success or retryable: for the end's report. */
  private String lastReason;
  private boolean lastSuccess;
  private boolean lastRetryable;
  /** Whether operationStarted was reported. */
  private boolean startReported;

  RetryLoop(ClientRuntime client) {
    super(client);
  }

  /** Fixes what the operation is ({@link Execution#define}) and finds its target's state. */
  @Override
  void define(Request request, String key, boolean keySent, Duration deadline,
      boolean passThrough, RetryPolicy retryPolicy, ResponseClassifier classifier) {
    super.define(request, key, keySent, deadline, passThrough, retryPolicy, classifier);
    ClientRuntime client = runtime();
    // A body above the policy's replay bound is sent once, like a one-shot body (RetryPolicy).
    this.oneShot = sentOnce(request, retryPolicy());
    this.target = client.circuitBreakers() == null
        ? null : client.circuitBreakers().forUrl(request.url());
    this.overload = client.overload() == null ? null : client.overload().forUrl(request.url());
  }

  @Override
  public final Attempt currentAttempt() {
    Attempt a = current;
    return a != null && a.number() > 0 ? a : null; // not one whose permits are being taken
  }

  /** The attempts ended for good (a run with steps goes on): the last one is not kept. */
  final void forgetLastAttempt() {
    current = null;
  }

  /** The target's circuit breaker state, or {@code null} without breakers. */
  final TargetCircuitBreakers.Target target() {
    return target;
  }

  /**
   * Whether the operation is registered with the client's lifecycle for its whole run (see
   * {@link Run}); otherwise it registers only while it waits ({@link #enterWait()}).
   */
  abstract boolean registeredForLife();

  /**
   * Registers the operation with the client's lifecycle while it waits (a backoff, a bulkhead or
   * rate-limit wait, a scheduled retry), so that a close wakes it; {@link #exitWait()} after.
   *
   * @return {@code false} when the client is closed: the operation must not wait (the check after
   *     the wait ends it)
   */
  final boolean enterWait() {
    ClientLifecycle lifecycle = runtime().lifecycle();
    return registeredForLife() ? !lifecycle.isClosed() : lifecycle.enterWait(this);
  }

  /** The wait that {@link #enterWait()} registered is over. */
  final void exitWait() {
    if (!registeredForLife()) {
      runtime().lifecycle().exit(this);
    }
  }

  /** The target's adaptive overload state, or {@code null} when every option is off. */
  io.github.resilienthttp.internal.guard.TargetOverload.Target overloadTarget() {
    return overload;
  }

  /** The last attempt's failure, or {@code null}: the cause of a refusal before the next one. */
  IOException lastFailure() {
    return lastFailure;
  }

  /**
   * A refusal before sending (the adaptive limit, the throttle): as is, or, after an attempt whose
   * outcome was unknown, {@link OutcomeUnknownException} with it attached.
   */
  IOException rejectedBeforeSend(ResilientHttpException rejection) {
    return unknownIfAnyOutcomeUnknown(rejection);
  }

  /**
   * Whether {@code request}'s body may be sent only once: one-shot
   * ({@link RequestBody#isOneShot()}) or above the policy's replay bound
   * ({@link RetryPolicy#maxReplayableBodyBytes()}). Such a body is never sent twice at the same
   * time either: its operation is not hedged.
   */
  public static boolean sentOnce(Request request, RetryPolicy policy) {
    RequestBody body = request.body();
    return body != null
        && (body.isOneShot() || contentLength(body) > policy.maxReplayableBodyBytes());
  }

  private static long contentLength(RequestBody body) {
    try {
      return body.contentLength();
    } catch (IOException e) {
      return -1; // unknown: not bounded
    }
  }

  /**
   * Checks that need no waiting, and takes the breaker's permission.
   *
   * @return the time left before the deadline, in nanoseconds
   */
  long beforeAttempt() throws IOException {
    ClientRuntime client = runtime();
    long remaining;
    if (!startReported) {
      // First, before anything may end the operation: operationEnded never comes without it.
      startReported = true;
      client.listeners().operationStarted(this);
      // The first attempt starts when the operation does: one clock reading for both.
      remaining = deadlineDurationNanos();
    } else {
      remaining = remainingNanos();
    }
    if (isCanceled() || client.lifecycle().isClosed()) {
      throw canceled(lastFailure); // a closed client starts no attempt: see canceled()
    }
    if (Thread.currentThread().isInterrupted()) {
      throw interrupted();
    }
    if (remaining < MIN_ATTEMPT_NANOS) {
      throw deadlineExceeded(attempts() == 0 ? "deadline passed before the first attempt"
          : "deadline passed before the next attempt", lastFailure);
    }
    Attempt next = new Attempt(this);
    current = next;
    if (!next.tryAcquireBreaker()) {
      client.listeners().circuitBreakerRejected(this, target.breaker().getName(), attempts() + 1);
      throw breakerRejected(target);
    }
    return remaining;
  }

  /**
   * The failure of a cancelled operation; also when a cancel won the race against handing over a
   * response (then the server acted if that response was a success).
   */
  IOException canceledFailure() {
    return canceled(lastFailure, lastSuccess);
  }

  /** The failure of a hedged operation cancelled with {@code inFlight} copies in flight. */
  IOException canceledFailure(List<Attempt> inFlight) {
    return canceled(lastFailure, lastSuccess || anyOnWire(inFlight));
  }

  /** A blocking caller of a hedged run was interrupted with {@code inFlight} copies in flight. */
  IOException interruptedInFlight(List<Attempt> inFlight) {
    return interrupted(anyOnWire(inFlight));
  }

  /** The deadline passed with {@code inFlight} hedged copies in flight. */
  DeadlineExceededException deadlineInFlight(List<Attempt> inFlight) {
    return deadlineExceeded("deadline passed with " + inFlight.size()
        + " hedged attempt(s) in flight", null, anyOnWire(inFlight));
  }

  private static boolean anyOnWire(List<Attempt> copies) {
    for (int i = 0; i < copies.size(); i++) {
      if (copies.get(i).mayHaveReachedServer()) {
        return true;
      }
    }
    return false;
  }

  /** Throws the cancel when the operation was cancelled (after a wait, before sending). */
  void checkNotCanceled() throws IOException {
    // A closed client starts no attempt either: after a wait, as before the first one.
    if (isCanceled() || runtime().lifecycle().isClosed()) {
      throw canceled(lastFailure);
    }
  }

  /** The permits of the attempt being set up or in flight. */
  Attempt permits() {
    return current;
  }

  /**
   * Gives back the current attempt's permits, whatever is still held. Drivers call it in
   * {@code finally} around every attempt and on every way out: it is idempotent.
   */
  void releasePermits() {
    AttemptPermits p = current;
    if (p != null) {
      p.releaseAll();
    }
  }

  /**
   * The bulkhead had no permit in time: fail ({@link Failures#bulkheadFull}); when the wait was cut
   * short by a cancel, the operation was cancelled.
   */
  IOException bulkheadRejected(long waitedNanos, boolean cutByDeadline) {
    if (isCanceled() || runtime().lifecycle().isClosed()) {
      return canceled(lastFailure);
    }
    runtime().listeners().bulkheadRejected(this, attempts() + 1);
    return bulkheadFull(runtime().bulkheadGate(), waitedNanos, cutByDeadline);
  }

  /** How long an attempt may wait for a bulkhead permit: stops at the deadline's floor. */
  static long bulkheadWaitNanos(long remainingNanos) {
    return Math.max(0, remainingNanos - MIN_ATTEMPT_NANOS);
  }

  /**
   * Starts an attempt with the permits that {@link #beforeAttempt()} and the driver took.
   *
   * @param remainingNanos the time left before the deadline, which caps the attempt's timeouts
   * @return the attempt; send {@link #request()} for it
   */
  Attempt startAttempt(long remainingNanos) {
    retryTokenHeld = false; // the retry it paid for happens now
    ClientRuntime client = runtime();
    // The clock reading that gave remainingNanos is the attempt's start (no clock call here).
    Attempt a = countAttempt(current, attempts() == 0 ? firstAttemptKind() : AttemptKind.RETRY,
        deadlineNanos() - remainingNanos);
    int attempt = a.number();
    if (attempt == 1) {
      // Only attempts that are really sent fund the budget: rejected operations are not traffic.
      client.retryBudget().onFirstAttempt();
    }
    client.listeners().attemptStarted(this, attempt, a.kind());
    return a;
  }

  /**
   * Ends the attempt that {@link #startAttempt} began and decides what comes next. Whatever it
   * throws (user code included: classifier, listener, backoff, budget), a response that is not
   * returned is closed here.
   *
   * @param response the attempt's response, or {@code null}
   * @param failure the attempt's exception, or {@code null}
   * @param callCanceled whether the attempt's call was canceled (by the user or at the deadline)
   * @return the response to return, or {@code null} to retry after {@link #retryDelay()} (its
   *     budget token already taken)
   * @throws IOException when the operation ends with a failure
   */
  Response afterAttempt(Response response, IOException failure, boolean callCanceled)
      throws IOException {
    Response result = null;
    try {
      result = endAttempt(response, failure, callCanceled);
      return result;
    } finally {
      if (result == null) {
        closeQuietly(response);
      }
      releasePermits();
    }
  }

  private Response endAttempt(Response response, IOException failure, boolean callCanceled)
      throws IOException {
    Decision decision = judge(response, failure, callCanceled);
    return decide(decision, response, failure, Copies.SEQUENTIAL, null);
  }

  /**
   * The first half of ending an attempt: a cancel or the deadline ends the operation (thrown);
   * otherwise {@link AttemptJudge} classifies the attempt in context, records it in the breaker
   * and reports it.
   */
  private Decision judge(Response response, IOException failure, boolean callCanceled)
      throws IOException {
    int attempt = current.number();
    if (callCanceled || isCanceled()) {
      if (realDeadlinePassed() || remainingNanos() < MIN_ATTEMPT_NANOS) {
        AttemptJudge.recordDeadline(current, failure);
        throw deadlineExceeded("deadline passed during attempt " + attempt, failure,
            current.mayHaveReachedServer());
      }
      throw canceled(failure, current.mayHaveReachedServer());
    }
    if (failure != null && remainingNanos() < MIN_ATTEMPT_NANOS) {
      AttemptJudge.recordDeadline(current, failure);
      throw deadlineExceeded("deadline passed during attempt " + attempt, failure,
          current.mayHaveReachedServer());
    }
    if (failure != null && DispatcherShutdown.rejected(runtime().wrapped(), failure)) {
      // Not the server's failure (nothing was sent, nothing recorded in the breaker) and not a
      // transient one: every retry would be rejected the same way.
      throw dispatcherShutDown(failure, attempt);
    }
    Decision decision = AttemptJudge.decision(this, request(), current, response, failure,
        anyMayHaveBeenProcessed);
    if (decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT) {
      anyMayHaveBeenProcessed = true;
    }
    boolean shedLoad = (response != null || !current.failedInClientBeforeWire())
        && Admission.recordAnswer(this, current, response, failure); // adaptive limit, throttle
    if (!shedLoad) {
      AttemptJudge.record(current, decision, response, failure);
    } // else the breaker's permission is given back unrecorded (AttemptPermits.releaseAll)
    if (!runtime().listeners().isEmpty() || AttemptJudge.reports()) {
      AttemptJudge.report(this, request(), current, decision, response, failure);
    }
    return decision;
  }

  // ---- Hedged attempts (HedgingDriver): several in flight, judged one at a time. ----

  /** Makes {@code a} the attempt that the next {@link #judgeHedged} or record refers to. */
  void focus(Attempt a) {
    current = a;
  }

  /**
   * Judges a hedged attempt (after {@link #focus}): as {@link #afterAttempt}'s first half.
   * Whatever it throws, the response is closed.
   */
  Decision judgeHedged(Response response, IOException failure, boolean callCanceled)
      throws IOException {
    try {
      return judge(response, failure, callCanceled);
    } catch (IOException | RuntimeException | Error e) {
      closeQuietly(response);
      throw e;
    } finally {
      current.releaseAll(); // recorded by judge, or given back unrecorded
    }
  }

  /** Whether a decision allows another copy (retryable for this operation). */
  boolean nonFatal(Decision decision) {
    return decision.kind() == Decision.Kind.RETRY
        || (decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT && idempotent());
  }

  /**
   * Ends a judged hedged attempt: returns the response that wins, throws the operation's failure,
   * or returns {@code null} (the response closed) when the answer is non-fatal and other copies go
   * on. With {@code giveUpReason} set, no copy goes on: a non-fatal answer ends the operation as a
   * retry loop's last attempt does, for that reason.
   */
  Response concludeHedged(Decision decision, Response response, IOException failure,
      String giveUpReason) throws IOException {
    Response result = null;
    try {
      result = decide(decision, response, failure,
          giveUpReason == null ? Copies.OTHERS_GO_ON : Copies.NONE_LEFT, giveUpReason);
      return result;
    } finally {
      if (result == null) {
        closeQuietly(response);
      }
    }
  }

  /**
   * Takes what a hedge needs, without waiting: time, a budget token, a breaker permission and a
   * free bulkhead permit. A refusal gives back what was taken and reports why; it never affects the
   * attempts in flight.
   *
   * @return the hedge's permits, or {@code null} when no hedge may start (the driver is told why)
   */
  Attempt reserveHedge(HedgingDriver driver) {
    if (runtime().lifecycle().isClosed()) {
      driver.refused(ClientLifecycle.REASON);
      return null;
    }
    if (isCanceled() || remainingNanos() < MIN_ATTEMPT_NANOS) {
      driver.refused("deadline");
      return null;
    }
    if (!runtime().retryBudget().tryAcquireRetry()) {
      runtime().listeners().retryBudgetRefused(this, attempts());
      driver.refused(RetryBudgetExhaustedException.REASON);
      return null;
    }
    Attempt p = new Attempt(this);
    if (!p.tryAcquireBreaker()) {
      runtime().retryBudget().refundRetry();
      runtime().listeners().circuitBreakerRejected(this, target.breaker().getName(), attempts() + 1);
      driver.refused("circuit-breaker-open");
      return null;
    }
    if (!p.tryAcquireBulkhead()) {
      p.releaseAll();
      runtime().retryBudget().refundRetry();
      runtime().listeners().bulkheadRejected(this, attempts() + 1);
      driver.refused("bulkhead-full");
      return null;
    }
    String overloadRefusal = Admission.reserveHedge(this, p);
    if (overloadRefusal != null) {
      p.releaseAll();
      runtime().retryBudget().refundRetry();
      driver.refused(overloadRefusal);
      return null;
    }
    return p;
  }

  /** Starts a hedge with the permits {@link #reserveHedge()} took. */
  Attempt startHedge(Attempt hedge) {
    Attempt a = countAttempt(hedge, AttemptKind.HEDGE, runtime().timeSource().nanoTime());
    runtime().listeners().attemptStarted(this, a.number(), AttemptKind.HEDGE);
    return a;
  }

  /**
   * The wait before the next attempt, after {@link #afterAttempt} returned {@code null}.
   *
   * @return the wait before the next attempt
   */
  Duration retryDelay() {
    return retryDelay;
  }

  /** Whether other copies of the attempt may follow its answer. */
  private enum Copies {
    /** The sequential loop: a retryable answer is retried after a backoff, paid from the budget. */
    SEQUENTIAL,
    /** Hedged, and other copies go on: a non-fatal answer returns {@code null}, no backoff. */
    OTHERS_GO_ON,
    /** Hedged, and no copy may follow: a non-fatal answer gives up, for the reason given. */
    NONE_LEFT
  }

  /**
   * The second half: the verdict for the attempt's answer.
   *
   * @param giveUpReason with {@link Copies#NONE_LEFT}: why no copy may follow
   */
  private Response decide(Decision decision, Response response, IOException failure,
      Copies copies, String giveUpReason) throws IOException {
    lastReason = decision.reason();
    lastSuccess = decision.kind() == Decision.Kind.SUCCESS;
    lastRetryable = decision.kind() == Decision.Kind.RETRY
        || (decision.kind() == Decision.Kind.RETRY_IF_IDEMPOTENT && idempotent());
    if (lastSuccess) {
      return response; // RetryRule.afterAttempt: a success is returned, whatever else holds
    }
    return decideNotSuccess(decision, response, failure, copies, giveUpReason);
  }

  /**
   * {@link #decide} for an answer that is not a success. Apart, so that {@code decide} stays
   * small enough for the JIT to inline on the healthy path: a hot method over 325 bytecodes
   * (C2's {@code FreqInlineSize}) is always called, never inlined.
   */
  private Response decideNotSuccess(Decision decision, Response response, IOException failure,
      Copies copies, String giveUpReason) throws IOException {
    RetryPolicy policy = retryPolicy();
    int attempt = current.number();
    RetryRule.Verdict verdict = RetryRule.afterAttempt(decision, attempt,
        copies == Copies.SEQUENTIAL ? policy.maxAttempts() : Integer.MAX_VALUE, idempotent(),
        oneShot && current.bodyWriteStarted());
    if (copies != Copies.SEQUENTIAL && verdict == null) {
      remember(response, failure);
      if (copies == Copies.OTHERS_GO_ON) {
        return null; // non-fatal: the other copies go on
      }
      verdict = RetryRule.Verdict.of(RetryRule.Kind.GIVE_UP, giveUpReason,
          "all " + attempts() + " attempts (hedged) failed");
    }
    // A cancel (a listener may have called it from attemptEnded) or an interrupt stops the
    // operation before any retry is scheduled or paid for; a final answer is still returned.
    // So does closing the client: the attempt in flight finished, no retry starts.
    boolean interrupted = Thread.currentThread().isInterrupted();
    boolean closed = runtime().lifecycle().isClosed();
    if (verdict == null && (isCanceled() || interrupted || closed)) {
      remember(response, failure);
      throw isCanceled() || closed ? canceled(failure) : interrupted();
    }
    if (verdict == null) {
      Duration delay = policy.backoff().delay(attempt, runtime().random());
      if (delay == null || delay.isNegative()) {
        throw new IllegalStateException("backoff " + policy.backoff() + " returned " + delay
            + " for retry " + attempt + "; a backoff must return a duration >= 0");
      }
      delay = Admission.pacedRetryDelay(this, delay);
      verdict = RetryRule.retry(decision, delay, policy.maxRetryAfter(), remainingNanos(),
          MIN_ATTEMPT_NANOS, target != null && isOpen(target.breaker()));
    }
    if ((verdict.kind() == RetryRule.Kind.GIVE_UP || verdict.kind() == RetryRule.Kind.DEADLINE
        || verdict.kind() == RetryRule.Kind.BREAKER_OPEN)
        && AnswerInContext.endsUnknown(decision, response, attempt, anyMayHaveBeenProcessed)) {
      lastReason = verdict.reason();
      throw unknownAnswer(verdict.reason(), response, attempt);
    }
    switch (verdict.kind()) {
      case RETURN:
        return response;
      case FAIL:
        if (response != null) {
          return response;
        }
        throw permanent(failure, attempt, decision.reason(), current.mayHaveReachedServer());
      case OUTCOME_UNKNOWN:
        throw outcomeUnknown(verdict.reason(), verdict.message(), response, failure, attempt);
      case GIVE_UP:
        return giveUp(decision, verdict.reason(), verdict.message(), response, failure);
      case DEADLINE:
        lastReason = "deadline";
        if (response != null) {
          return response;
        }
        throw deadlineExceeded(verdict.message(), failure);
      case BREAKER_OPEN:
        // The breaker opened during this attempt: stop now rather than wait for a rejection.
        runtime().listeners().circuitBreakerRejected(this, target.breaker().getName(), attempt + 1);
        lastReason = "circuit-breaker-open";
        if (response != null) {
          return response;
        }
        throw breakerOpen(attempt, target, failure);
      default: // RETRY
        break;
    }
    // The token is taken before the wait, so operations waiting in backoff cannot overshoot.
    if (!runtime().retryBudget().tryAcquireRetry()) {
      runtime().listeners().retryBudgetRefused(this, attempt);
      lastReason = RetryBudgetExhaustedException.REASON;
      if (AnswerInContext.endsUnknown(decision, response, attempt, anyMayHaveBeenProcessed)) {
        throw unknownAnswer(lastReason, response, attempt);
      }
      if (response != null) {
        return response;
      }
      throw budgetExhausted(String.valueOf(decision), attempt, failure);
    }
    retryTokenHeld = true;
    remember(response, failure);
    runtime().listeners().retryScheduled(this, attempt + 1, verdict.delay(), verdict.fromRetryAfter());
    retryDelay = verdict.delay();
    return null;
  }

  private static boolean isOpen(CircuitBreaker breaker) {
    CircuitBreaker.State s = breaker.getState();
    return s == CircuitBreaker.State.OPEN || s == CircuitBreaker.State.FORCED_OPEN;
  }

  /**
   * Reports the end of the operation to listeners and the log.
   *
   * @return the response to hand over ({@link #explained}), or {@code null} without one
   */
  Response ended(Response response, Throwable failure) {
    return ended(response, failure, response != null ? current : null);
  }

  /** The same, naming the attempt whose response is returned (a hedge may beat the first). */
  Response ended(Response response, Throwable failure, Attempt winner) {
    end();
    // A success at the first attempt, with nobody to tell: nothing to report, nothing to refund.
    if (lastSuccess && response != null && failure == null && attempts() == 1 && !retryTokenHeld
        && runtime().listeners().isEmpty() && !log.isDebugEnabled()) {
      return response;
    }
    return report(response, failure, winner);
  }

  /**
   * {@link #ended} with something to report or refund. Apart, so that {@code ended} stays small
   * enough for the JIT to inline on the healthy path (see {@link #decideNotSuccess}).
   */
  private Response report(Response response, Throwable failure, Attempt winner) {
    if (retryTokenHeld) {
      // Paid for a retry that never started (cancel, interrupt, deadline, breaker, bulkhead).
      retryTokenHeld = false;
      runtime().retryBudget().refundRetry();
    }
    String reason = failure instanceof OperationFailure f ? f.reason()
        : failure != null ? "failed" : lastReason;
    OperationResult.Outcome outcome =
        OperationResult.Outcome.of(response != null && lastSuccess, response != null, failure);
    boolean quiet = outcome == OperationResult.Outcome.SUCCESS
        || (outcome == OperationResult.Outcome.FAILED_RESPONSE && !lastRetryable);
    // A success at the first attempt needs no explaining: the fast path copies nothing.
    boolean explain = response != null && !(lastSuccess && attempts() == 1);
    if (quiet && !explain && runtime().listeners().isEmpty() && !log.isDebugEnabled()) {
      return response;
    }
    OperationResult result = new OperationResult(outcome, attempts(), networkRequests(),
        Duration.ofNanos(elapsedNanos()), response != null ? response.code() : -1, failure,
        reason, winner == null ? 0 : winner.number(), winner == null ? null : winner.kind(),
        failure instanceof OperationFailure f ? f.mayHaveExecuted()
            : (response != null && lastSuccess) || anyMayHaveBeenProcessed);
    if (failure instanceof OutcomeUnknownException || failure instanceof DeadlineExceededException) {
      log.warn("{} gave up: {}", info(), result);
    } else if (failure != null
        || (outcome == OperationResult.Outcome.FAILED_RESPONSE && lastRetryable)) {
      log.info("{} gave up: {}", info(), result);
    } else if (log.isDebugEnabled()) {
      log.debug("{} ended: {}", info(), result);
    }
    runtime().listeners().operationEnded(this, result);
    return explain ? explained(response, result) : response;
  }

  /**
   * {@code response}, its request tagged with {@code result}, for {@link OperationResult#of}: the
   * same body and headers in a new {@code Response} (OkHttp's responses are immutable).
   */
  private static Response explained(Response response, OperationResult result) {
    return response.newBuilder().request(response.request().newBuilder()
        .tag(OperationResult.class, result).build()).build();
  }

  /** Ends a retryable operation that may not retry: returns the last response or throws. */
  private Response giveUp(Decision decision, String why, String message, Response response,
      IOException failure) throws IOException {
    lastReason = why;
    if (response != null) {
      return response;
    }
    throw gaveUp(why, message + "; last: " + decision, failure, current.number());
  }

  static void closeQuietly(Response response) {
    if (response != null) {
      response.close();
    }
  }

  /**
   * Stands for a retryable or outcome-unknown HTTP answer where an exception is needed: as the
   * failure recorded in the circuit breaker. Stackless: it is data, not a bug report.
   */
  static final class RetryableStatus extends IOException {
    private static final long serialVersionUID = 1L;

    RetryableStatus(int status, String reason) {
      super("status " + status + " (" + reason + ")", null);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}

package io.github.resilienthttp;

import io.github.resilienthttp.internal.async.PollLoop;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.KeyDecision;
import io.github.resilienthttp.internal.engine.OperationSettings;
import io.github.resilienthttp.internal.engine.Run;
import io.github.resilienthttp.internal.outbox.OutboxExit;
import io.github.resilienthttp.internal.query.QueryLoop;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import okhttp3.Request;
import okhttp3.Response;

/**
 * One logical operation (one business intent, such as "create this payment"): one request, run with
 * as many attempts as the client's {@link RetryPolicy} and {@link ResponseClassifier} allow, all
 * carrying the same idempotency key.
 *
 * <p>Create one with {@link ResilientHttpClient#operation(Request)}, optionally adjust it, then
 * {@link #execute()} it once. The key is readable at any time with {@link #idempotencyKey()} and is
 * the same before, during and after execution; store it before executing if you may need to resume
 * the intent after a crash.
 *
 * <p>Not thread-safe while being configured; {@link #execute()} may be called only once (from any
 * thread); the getters and {@link #cancel()} may be called from any thread at any time.
 *
 * <p>A handle: what the setters chose is built once, immutable, when the operation starts, and the
 * run (its attempts, its 202 wait or outcome query, its outbox exit, one deadline, the one cancel
 * target) is the engine's.
 */
public final class Operation {
  private final ClientRuntime client;
  private final Request request;
  /** What the setters chose, made by the first one; built once by {@link #begin}. */
  private OperationSettings.Builder settings;
  /** The run, made with the handle (a cancel may come before the start): the one cancel target. */
  private final Run run;

  Operation(ClientRuntime client, Request request) {
    this.client = client;
    this.request = request;
    this.run = new Run(client);
    IdempotencyKeyPolicy policy = client.idempotencyKeyPolicy();
    String header = policy.keyFromHeader(request.header(policy.headerName()));
    if (header != null) {
      settings().keyInHeader(IdempotencyKeyPolicy.validateKey(header));
    }
  }

  /**
   * Uses {@code key} instead of a new random one, and sends it: to resume a known intent (for
   * example after a crash, or after {@link OutcomeUnknownException}) so that the server can
   * recognise it. Used verbatim; never replaced.
   *
   * @param key 1 to 255 visible ASCII characters (0x21..0x7E)
   * @return this operation
   * @throws IllegalArgumentException when the key breaks that rule, or the request already carries
   *     a different key in its key header
   * @throws IllegalStateException after {@link #execute()}
   */
  public synchronized Operation idempotencyKey(String key) {
    checkNotExecuted();
    IdempotencyKeyPolicy.validateKey(key);
    IdempotencyKeyPolicy policy = client.idempotencyKeyPolicy();
    String header = policy.keyFromHeader(request.header(policy.headerName()));
    if (header != null && !header.equals(key)) {
      throw new IllegalArgumentException("the request already carries "
          + client.idempotencyKeyPolicy().headerName() + " with a different key");
    }
    settings().key(key);
    return this;
  }

  /**
   * Forces sending the key on ({@code true}) or off ({@code false}) for this operation, overriding
   * the client's {@link IdempotencyKeyPolicy#send()}. Turning it off for a POST makes the operation
   * non-idempotent: failures with an unknown outcome then end in {@link OutcomeUnknownException}
   * instead of a retry. A key header already on the request is always sent as is.
   *
   * @param send {@code true} to send the key, {@code false} not to
   * @return this operation
   * @throws IllegalStateException after {@link #execute()}
   */
  public Operation sendIdempotencyKey(boolean send) {
    checkNotExecuted();
    settings().sendKey(send);
    return this;
  }

  /**
   * The total time this operation may take, replacing {@link RetryPolicy#deadline()}.
   *
   * @param deadline 1 ms to 24 h
   * @return this operation
   * @throws IllegalArgumentException when out of range
   * @throws IllegalStateException after {@link #execute()}
   */
  public Operation deadline(Duration deadline) {
    checkNotExecuted();
    Objects.requireNonNull(deadline, "deadline");
    RetryPolicy.Builder.checkRange("deadline", deadline, Duration.ofMillis(1));
    settings().deadline(deadline);
    return this;
  }

  /**
   * Parks this operation's intent in {@code outbox} when it ends without a definite outcome
   * (outcome unknown, retry budget, circuit breaker, bulkhead, deadline, retries exhausted, a wait
   * that stopped; not a definite failure or a cancel): its {@link ResumeToken} is stored for an
   * {@link OutboxResumer} to resume later with the same key, a listener event
   * ({@link OperationListener#operationParked}) and a WARN line say so, and the failure is still
   * thrown to the caller.
   *
   * @param outbox the outbox, or {@code null} for none
   * @return this operation
   * @throws IllegalStateException after {@link #execute()}
   */
  public Operation parkIndefiniteOutcomes(Outbox outbox) {
    checkNotExecuted();
    settings().outbox(outbox);
    return this;
  }

  /**
   * Settles an unknown outcome by asking, for a downstream without idempotency keys: when this
   * operation would end with {@link OutcomeUnknownException}, {@code policy}'s query runs (after
   * its grace delay, inside the deadline) and its answer decides: found, the query's response is
   * returned ({@link OutcomeQuery#foundByQuery(Response)}); not found, the request is sent again;
   * cannot tell, the exception as before. See {@link OutcomeQueryPolicy}, and the race it cannot
   * close.
   *
   * @param policy the query policy, or {@code null} for none
   * @return this operation
   * @throws IllegalStateException after {@link #execute()}
   */
  public Operation outcomeQuery(OutcomeQueryPolicy policy) {
    checkNotExecuted();
    settings().outcomeQuery(policy);
    return this;
  }

  /**
   * Runs this operation under {@code policy} instead of the client's {@link RetryPolicy}: its
   * attempts, backoff, {@code Retry-After} cap and, unless {@link #deadline(Duration)} is set, its
   * deadline. The client's budget, breaker and bulkhead still apply (they are shared by every
   * operation of the client).
   *
   * @param policy the retry policy for this operation; not {@code null}
   * @return this operation
   * @throws NullPointerException if {@code policy} is null
   * @throws IllegalStateException after {@link #execute()}
   */
  public Operation retryPolicy(RetryPolicy policy) {
    Objects.requireNonNull(policy, "retryPolicy");
    checkNotExecuted();
    settings().retryPolicy(policy);
    return this;
  }

  /**
   * Classifies this operation's answers with {@code classifier} instead of the client's {@link
   * ResponseClassifier}. The SDK's context rules still apply on top of it (a 409 to a keyed retry is
   * read as about the earlier attempt; see {@code docs/classification.md}). A classifier that throws
   * ends the operation with that exception, as the client's does.
   *
   * @param classifier the classifier for this operation; not {@code null}
   * @return this operation
   * @throws NullPointerException if {@code classifier} is null
   * @throws IllegalStateException after {@link #execute()}
   */
  public Operation classifier(ResponseClassifier classifier) {
    Objects.requireNonNull(classifier, "classifier");
    checkNotExecuted();
    settings().classifier(classifier);
    return this;
  }

  /**
   * Hedges this operation with {@code policy} instead of the client's ({@link HedgingPolicy}); an
   * operation that is not idempotent under the policy is not hedged.
   *
   * @param policy the hedging policy, or {@code null} for none
   * @return this operation
   * @throws IllegalStateException after {@link #execute()}
   */
  public Operation hedging(HedgingPolicy policy) {
    checkNotExecuted();
    settings().hedging(policy);
    return this;
  }

  /**
   * This operation's idempotency key (sent or not). Never {@code null}.
   *
   * @return this operation's idempotency key
   */
  public String idempotencyKey() {
    if (run.isStarted()) {
      return run.key();
    }
    // Before the start, the caller's key, else the run's: made on first use, once, so that an
    // operation whose key is neither sent nor asked for (most GETs) never pays for a random UUID,
    // and the key read before the start is the one the run sends.
    String k = settings == null ? null : settings.key();
    return k != null ? k : run.key();
  }

  /**
   * Whether the key is (or will be) sent with this operation's requests.
   *
   * @return whether the key is (or will be) sent with this operation's requests
   */
  public boolean idempotencyKeySent() {
    if (run.isStarted()) {
      return run.keySent();
    }
    synchronized (this) {
      return decideKeySent(settings == null ? OperationSettings.DEFAULTS : settings.build());
    }
  }

  /**
   * Attempts started so far (0 before {@link #execute()}).
   *
   * @return attempts started so far (0 before {@link #execute()})
   */
  public int attempts() {
    return run.attempts();
  }

  /**
   * Requests written to the network so far, counted by a network interceptor: attempts plus any
   * follow-ups OkHttp made itself (redirects, authentication challenges). Equal to what the server
   * saw, minus attempts that failed before sending.
   *
   * @return requests written to the network so far
   */
  public int networkRequests() {
    return run.networkRequests();
  }

  /**
   * The request as given, without the key header the SDK adds.
   *
   * @return the request as given, without the key header the SDK adds
   */
  public Request request() {
    return request;
  }

  /**
   * Runs the operation: attempts, waits and retries until a response is final, the attempts run out
   * or the deadline passes.
   *
   * <p>Returns the final response (success, a permanent failure such as 404, or the last retryable
   * response such as 503 when no more attempts were allowed); the caller must close it. The
   * deadline bounds reading the response body too: once it has passed, the call is timed out the
   * way OkHttp's own call timeout does it, and reading fails with OkHttp's
   * {@code InterruptedIOException("timeout")}. The wrapped client's {@code callTimeout} does not
   * apply: the deadline replaces it.
   *
   * @return the final response, which the caller must close
   * @throws OutcomeUnknownException when the server may have processed the request and retrying was
   *     not safe (not idempotent, or a one-shot body)
   * @throws RetriesExhaustedException when every attempt failed with an exception before reaching
   *     the server
   * @throws DeadlineExceededException when the deadline passed, or the next retry could not start
   *     before it
   * @throws OperationInterruptedException when the calling thread was interrupted (its interrupt
   *     flag stays set)
   * @throws ResilientHttpException for a permanent failure (e.g. an untrusted certificate)
   * @throws IllegalStateException when called a second time,
   *     or after the client was {@link ResilientHttpClient#close() closed} ("client closed")
   */
  public Response execute() throws IOException {
    return begin(null, null).execute();
  }

  /**
   * Runs the operation without holding a thread while it waits: attempts go through OkHttp's
   * {@link okhttp3.Call#enqueue}, and waits between attempts are scheduled on the client's
   * {@link ResilientHttpClient.Builder#scheduler scheduler}. Same semantics as {@link #execute()}:
   * same key on every attempt, classifier, deadline, budget, breaker, bulkhead (an attempt waiting
   * for a permit holds no thread either) and listener events; the exceptions {@code execute()}
   * throws complete the future exceptionally.
   *
   * <p>The future completes on a thread of the wrapped client's {@link okhttp3.Dispatcher}
   * executor: the OkHttp callback thread of the last attempt (as OkHttp's own
   * {@link okhttp3.Callback} would), or, for an operation rejected before an attempt, a task on
   * that executor; never on the SDK's scheduler thread, so dependent stages cannot stall other
   * operations' retries. As with OkHttp callbacks, run blocking work with
   * {@code thenApplyAsync(fn, yourExecutor)}. Cancelling the future (or {@link #cancel()}) cancels
   * the in-flight attempt and any scheduled retry: nothing is sent after cancellation, and the
   * response of a cancelled attempt is closed. Completing it in any other way ({@code orTimeout},
   * {@code completeExceptionally}, {@code complete}) cancels the operation too, its outcome query
   * and re-sends included. Cancel the future this method returned: a future derived from it
   * ({@code thenApply}, {@code whenComplete}, ...) is another future, and cancelling that one does
   * not reach the operation.
   *
   * <p>Waits use the scheduler's real clock; the client's {@link TimeSource} still measures the
   * deadline.
   *
   * @return a future of the final response, which the caller must close
   * @throws IllegalStateException when the operation was already executed,
   *     or after the client was {@link ResilientHttpClient#close() closed} ("client closed")
   */
  public CompletableFuture<Response> executeAsync() {
    return begin(null, null).executeAsync();
  }

  /**
   * Cancels the operation: the in-flight attempt's call is cancelled, no further attempt starts,
   * and an async operation's future completes as cancelled at once. A blocking {@link #execute()}
   * that is waiting between attempts, or for a bulkhead permit, wakes at once (with the system
   * {@link TimeSource}, or one that implements
   * {@link TimeSource#sleep(Duration, java.util.concurrent.Future)}) and throws
   * {@link ResilientHttpException} with reason {@code canceled}. Cancelling before
   * {@code execute()} or {@code executeAsync()} makes it end that way without sending anything. Has
   * no effect on an operation that has already ended (a returned response's body stays readable). A
   * retry budget token taken for a retry that the cancel stopped is given back
   * ({@link RetryBudget#refundRetry()}). {@code operationEnded} is still reported once, as the last
   * event, by the thread that was running the operation. Thread-safe.
   */
  public void cancel() {
    run.cancelRun();
  }

  /**
   * Runs the operation and, when the server accepts it for later ({@code 202 Accepted}), waits for
   * it to finish: finds its status resource ({@link AsyncOperationPolicy#statusLocator()}), polls
   * it until the {@link AsyncOperationPolicy#statusContract() status contract} reads a terminal
   * state, and returns the final result (a GET of its location, or the terminal status response). A
   * response other than {@code 202} is returned as {@link #execute()} would.
   *
   * <p>One deadline covers the submit, every poll and the result fetch
   * ({@link AsyncOperationPolicy#deadline()}, or this operation's); each poll's attempt timeouts
   * shrink to the time left. {@code Retry-After} is honoured on the {@code 202} and on every poll,
   * never early. Each poll is an ordinary GET (classified, retried on transient failure such as a
   * {@code 503}, bounded by the budget and the breaker), reported with {@link AttemptKind#POLL};
   * the submit is never re-sent once accepted. {@link #cancel()} stops polling; it does not cancel
   * the server's job ({@link ResilientHttpClient#cancelOnServer(ResumeToken)} does, when the server
   * gave a cancel URL).
   *
   * @param policy how to wait
   * @return the final result, which the caller must close
   * @throws AsyncOperationFailedException when the operation failed or was cancelled on the server
   * @throws AsyncOperationDeadlineExceededException when the deadline passed while waiting
   * @throws PollFailedException when polling stopped without an answer (reason {@code canceled}
   *     after {@link #cancel()})
   * @throws AsyncOperationInterruptedException when the waiting thread was interrupted
   * @throws IOException what {@link #execute()} throws, for the submit
   * @throws IllegalStateException when called a second time,
   *     or after the client was {@link ResilientHttpClient#close() closed} ("client closed")
   */
  public Response awaitCompletion(AsyncOperationPolicy policy) throws IOException {
    return awaiting(policy, null).execute();
  }

  /**
   * {@link #awaitCompletion(AsyncOperationPolicy)} without holding a thread: polls are
   * {@link #executeAsync()} operations and waits are scheduled on the client's scheduler. The
   * exceptions {@code awaitCompletion} throws complete the future exceptionally; cancelling the
   * future (or {@link #cancel()}) stops polling (not the server's job).
   *
   * @param policy how to wait
   * @return a future of the final result, which the caller must close
   * @throws IllegalStateException when called a second time,
   *     or after the client was {@link ResilientHttpClient#close() closed} ("client closed")
   */
  public CompletableFuture<Response> awaitCompletionAsync(AsyncOperationPolicy policy) {
    return awaiting(policy, null).executeAsync();
  }

  /**
   * The run of this operation with the 202 wait, started: the client's resumption re-submits
   * through it ({@code keyCreatedAt}: the token's).
   */
  Run awaiting(AsyncOperationPolicy policy, Instant keyCreatedAt) {
    return begin(Objects.requireNonNull(policy, "policy"), keyCreatedAt);
  }

  private static Response markFoundByQuery(Response r) {
    return r.newBuilder().request(r.request().newBuilder()
        .tag(OutcomeQuery.FoundByQuery.class, OutcomeQuery.FoundByQuery.INSTANCE).build()).build();
  }

  /**
   * A new operation that the SDK runs on its own, its first attempt reported as {@code kind}
   * (a poll, a query, a re-send): the client's {@link
   * io.github.resilienthttp.internal.engine.OperationFactory}.
   */
  static Operation create(ClientRuntime client, Request request, AttemptKind kind) {
    Operation op = new Operation(client, request);
    if (kind != AttemptKind.FIRST) {
      op.settings().firstKind(kind);
    }
    return op;
  }


  /**
   * Starts the run, once: the key decided, the running state made, the features put in as steps
   * (the 202 wait when {@code wait} is given, the outcome query, the outbox exit), under one
   * deadline: the wait's, else this operation's, else its retry policy's.
   */
  private Run begin(AsyncOperationPolicy wait, Instant keyCreatedAt) {
    Run r = run;
    // Claimed for good: an operation that fails to start (a policy that cannot build its steps)
    // is not run again either; make a new one.
    if (!r.claim()) {
      throw new IllegalStateException("an Operation runs once; create a new one with"
          + " client.operation(request), or resume an intent with .idempotencyKey(key)");
    }
    OperationSettings s = settings == null ? OperationSettings.DEFAULTS : settings.build();
    boolean keySent = decideKeySent(s);
    // The caller's key, else the one a getter made before the start, else (when sent) a new one.
    String k = s.key();
    Duration deadline = wait == null ? s.deadline() : wait.deadline().orElse(s.deadline());
    r.define(request, k, keySent, deadline, s.retryPolicy(), s.classifier());
    if (s.firstKind() != null) {
      r.firstAttemptKind(s.firstKind());
    }
    HedgingPolicy hedging = s.hedgingOr(client.hedgingPolicy());
    Outbox outbox = s.outbox();
    Instant started = outbox != null || wait != null
        ? (keyCreatedAt != null ? keyCreatedAt : client.timeSource().now()) : null;
    QueryLoop query = s.outcomeQuery() == null ? null : new QueryLoop(client, s.outcomeQuery(), r,
        request, r.key(), keySent, Operation::markFoundByQuery);
    PollLoop steps = wait == null ? null
        : PollLoop.submit(client, wait, r, request, r, started);
    UnaryOperator<IOException> exit = outbox == null ? null
        : e -> OutboxExit.park(client, outbox, this, started, e);
    r.start(r.hedges(hedging) ? hedging : null, steps, query, exit);
    return r;
  }

  private boolean decideKeySent(OperationSettings s) {
    return KeyDecision.keySent(s.keyInHeader(), s.sendKey(), s.keyFromCaller(),
        client.idempotencyKeyPolicy(), request.method());
  }

  private OperationSettings.Builder settings() {
    if (settings == null) {
      settings = new OperationSettings.Builder();
    }
    return settings;
  }

  private void checkNotExecuted() {
    if (run.isClaimed()) {
      throw new IllegalStateException("the operation has already been executed");
    }
  }

  @Override
  public String toString() {
    return "Operation{" + request.method() + " " + request.url().redact() + ", key="
        + IdempotencyKeyPolicy.shorten(settings != null && settings.key() != null ? settings.key()
        : run.keyIfMade()) + "…}";
  }
}

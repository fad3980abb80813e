package io.github.resilienthttp;

import io.github.resilienthttp.internal.async.PollLoop;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.Execution;
import io.github.resilienthttp.internal.engine.KeyDecision;
import io.github.resilienthttp.internal.engine.OperationFuture;
import io.github.resilienthttp.internal.engine.Run;
import io.github.resilienthttp.internal.outbox.OutboxExit;
import io.github.resilienthttp.internal.query.QueryLoop;
import io.github.resilienthttp.internal.util.Floors;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
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
 * thread); the getters may be called from any thread at any time.
 */
public final class Operation {
  private final ClientRuntime client;
  private final Request request;
  /** Set once, by {@link #begin()} (synchronized); volatile for the unsynchronized checks. */
  private volatile boolean executed;
  private String key;
  private boolean keyFromCaller;
  private Boolean sendKey;
  private Duration deadline;
  private volatile Execution context;
  /** The run of the attempts, once begun: {@link #cancel()} reaches it. */
  private volatile Run run;
  /** This operation's hedging, when {@link #hedgingSet}; otherwise the client's. */
  private HedgingPolicy hedging;
  private boolean hedgingSet;
  private volatile boolean cancelRequested;
  /** The wait of {@link #awaitCompletion}, when one runs: {@link #cancel()} stops it. */
  private volatile PollLoop waiter;
  /** Where an indefinite outcome is parked, when set. */
  private Outbox outbox;
  /** Settles an unknown outcome by asking, when set. */
  private OutcomeQueryPolicy outcomeQuery;
  /** The step settling this operation's unknown outcome, once it runs: {@link #cancel()} stops it. */
  private volatile QueryLoop queryStep;
  /** The kind of the first attempt, when not {@link AttemptKind#FIRST} (polls and queries). */
  private AttemptKind firstAttemptKind;
  private RetryPolicy retryPolicy;
  private ResponseClassifier classifier;

  Operation(ClientRuntime client, Request request) {
    this.client = client;
    this.request = request;
    IdempotencyKeyPolicy policy = client.idempotencyKeyPolicy();
    String header = policy.keyFromHeader(request.header(policy.headerName()));
    if (header != null) {
      this.key = IdempotencyKeyPolicy.validateKey(header);
      this.keyFromCaller = true;
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
    this.key = key;
    this.keyFromCaller = true;
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
    this.sendKey = send;
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
    this.deadline = deadline;
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
    this.outbox = outbox;
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
    this.outcomeQuery = policy;
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
    this.retryPolicy = policy;
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
    this.classifier = classifier;
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
    this.hedging = policy;
    this.hedgingSet = true;
    return this;
  }

  /**
   * This operation's idempotency key (sent or not). Never {@code null}.
   *
   * @return this operation's idempotency key
   */
  public String idempotencyKey() {
    Execution c = context;
    if (c != null) {
      return c.key();
    }
    synchronized (this) {
      c = context;
      if (c != null) {
        return c.key();
      }
      // Made on first use: an operation whose key is neither sent nor asked for (most GETs) never
      // pays for a random UUID. Once made, it is the operation's key for good.
      if (key == null) {
        key = client.newKey();
      }
      return key;
    }
  }

  /**
   * Whether the key is (or will be) sent with this operation's requests.
   *
   * @return whether the key is (or will be) sent with this operation's requests
   */
  public boolean idempotencyKeySent() {
    Execution c = context;
    return c != null ? c.spec().keySent() : decideKeySent();
  }

  /**
   * Attempts started so far (0 before {@link #execute()}).
   *
   * @return attempts started so far (0 before {@link #execute()})
   */
  public int attempts() {
    Execution c = context;
    return c == null ? 0 : c.attempts();
  }

  /**
   * Requests written to the network so far, counted by a network interceptor: attempts plus any
   * follow-ups OkHttp made itself (redirects, authentication challenges). Equal to what the server
   * saw, minus attempts that failed before sending.
   *
   * @return requests written to the network so far
   */
  public int networkRequests() {
    Execution c = context;
    return c == null ? 0 : c.networkRequests();
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
   * @throws IllegalStateException when called a second time
   */
  public Response execute() throws IOException {
    Outbox exit = outbox;
    Instant started = exit == null ? null : client.timeSource().now();
    try {
      OutcomeQueryPolicy query = outcomeQuery;
      if (query != null) {
        return newQueryLoop(query).execute(this::executeAttempts);
      }
      return executeAttempts();
    } catch (IOException e) {
      throw exit == null ? e : OutboxExit.park(client, exit, this, started, e);
    }
  }

  private Response executeAttempts() throws IOException {
    return begin().execute();
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
   * @throws IllegalStateException when the operation was already executed
   */
  public CompletableFuture<Response> executeAsync() {
    Outbox exit = outbox;
    OutcomeQueryPolicy query = outcomeQuery;
    if (exit == null && query == null) {
      return executeAttemptsAsync();
    }
    Instant started = client.timeSource().now();
    CompletableFuture<Response> run = query != null
        ? newQueryLoop(query).executeAsync(this::executeAttemptsAsync)
        : executeAttemptsAsync();
    // Completing the returned future from outside (cancel, orTimeout, complete...) cancels the
    // operation, its outcome query and its re-sends, as executeAsync()'s own future does.
    OperationFuture out = new OperationFuture(this::cancel);
    run.whenComplete((r, e) -> {
      if (e == null) {
        if (!out.completeFromOperation(r)) {
          r.close();
        }
        return;
      }
      Throwable cause = Floors.unwrap(e);
      if (exit != null && cause instanceof IOException io) {
        cause = OutboxExit.park(client, exit, this, started, io);
      }
      out.failFromOperation(cause);
    });
    return out;
  }

  private CompletableFuture<Response> executeAttemptsAsync() {
    return begin().executeAsync();
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
    // The flag first, then the context: begin() publishes the context, then reads the flag, so one
    // of the two always sees the other and no attempt starts after cancel() returned.
    cancelRequested = true;
    PollLoop w = waiter;
    if (w != null) {
      w.cancel();
    }
    QueryLoop q = queryStep;
    if (q != null) {
      q.cancel();
    }
    Run r = run;
    if (r != null) {
      r.cancel();
    }
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
   * @throws IllegalStateException when called a second time
   */
  public Response awaitCompletion(AsyncOperationPolicy policy) throws IOException {
    PollLoop w = newWaiter(policy);
    Instant started = client.timeSource().now();
    try {
      return w.submitAndWait(this, deadline, started);
    } catch (IOException e) {
      // The submit's own failures were parked by execute(); the wait's carry a resume token.
      Outbox exit = outbox;
      throw exit != null && e instanceof ResumableFailure
          ? OutboxExit.park(client, exit, this, started, e) : e;
    }
  }

  /**
   * {@link #awaitCompletion(AsyncOperationPolicy)} without holding a thread: polls are
   * {@link #executeAsync()} operations and waits are scheduled on the client's scheduler. The
   * exceptions {@code awaitCompletion} throws complete the future exceptionally; cancelling the
   * future (or {@link #cancel()}) stops polling (not the server's job).
   *
   * @param policy how to wait
   * @return a future of the final result, which the caller must close
   * @throws IllegalStateException when called a second time
   */
  public CompletableFuture<Response> awaitCompletionAsync(AsyncOperationPolicy policy) {
    PollLoop w = newWaiter(policy);
    Instant started = client.timeSource().now();
    Outbox exit = outbox;
    CompletableFuture<Response> f = w.submitAndWaitAsync(this, deadline, started);
    if (exit != null) {
      f.whenComplete((r, e) -> {
        Throwable cause = Floors.unwrap(e);
        if (cause instanceof ResumableFailure && cause instanceof IOException io) {
          OutboxExit.park(client, exit, this, started, io);
        }
      });
    }
    return f;
  }

  PollLoop newWaiter(AsyncOperationPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    checkNotExecuted();
    PollLoop w = new PollLoop(client, policy);
    waiter = w;
    if (cancelRequested) {
      w.cancel();
    }
    return w;
  }

  private QueryLoop newQueryLoop(OutcomeQueryPolicy policy) {
    QueryLoop q = new QueryLoop(client, policy, this, deadline, Operation::markFoundByQuery);
    this.queryStep = q;
    if (cancelRequested) {
      q.cancel();
    }
    return q;
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
      op.firstAttemptKind = kind;
    }
    return op;
  }

  /** Starts the run: once; the key decided, the context made, a cancel already asked applied. */
  private synchronized Run begin() {
    if (executed) {
      throw new IllegalStateException("an Operation runs once; create a new one with"
          + " client.operation(request), or resume an intent with .idempotencyKey(key)");
    }
    executed = true;
    boolean keySent = decideKeySent();
    if (keySent && key == null) {
      key = client.newKey();
    }
    Execution op = Execution.create(client, request, key, keySent, deadline, false, retryPolicy,
        classifier);
    if (firstAttemptKind != null) {
      op.firstAttemptKind(firstAttemptKind);
    }
    HedgingPolicy policy = hedgingSet ? hedging : client.hedgingPolicy();
    Run r = new Run(op, request, Run.hedges(policy, request, op) ? policy : null);
    context = op;
    run = r;
    // The flag first in cancel(), then the run here: one of the two always sees the other, so no
    // attempt starts after cancel() returned.
    if (cancelRequested) {
      r.cancel();
    }
    return r;
  }

  private boolean decideKeySent() {
    IdempotencyKeyPolicy policy = client.idempotencyKeyPolicy();
    return KeyDecision.keySent(request.header(policy.headerName()) != null, sendKey, keyFromCaller,
        policy, request.method());
  }

  private void checkNotExecuted() {
    if (executed) {
      throw new IllegalStateException("the operation has already been executed");
    }
  }

  @Override
  public String toString() {
    return "Operation{" + request.method() + " " + request.url().redact() + ", key="
        + IdempotencyKeyPolicy.shorten(key) + "…}";
  }
}

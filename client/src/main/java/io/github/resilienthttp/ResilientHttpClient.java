package io.github.resilienthttp;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.internal.async.Resumption;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.ClientSettings;
import io.github.resilienthttp.internal.guard.BulkheadGate;
import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import io.github.resilienthttp.internal.okhttp.OkHttpVersionCheck;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Wraps an existing {@link OkHttpClient} and runs requests as {@link Operation}s: one idempotency key
 * per operation, reused on every attempt; outcomes classified by a pluggable
 * {@link ResponseClassifier}; exponential full-jitter backoff that honours {@code Retry-After}; and a
 * total deadline over all attempts.
 *
 * <pre>{@code
 * ResilientHttpClient client = ResilientHttpClient.wrap(okHttpClient)
 *     .retryPolicy(RetryPolicy.builder()
 *         .maxAttempts(4)
 *         .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(100), Duration.ofSeconds(5)))
 *         .deadline(Duration.ofSeconds(10))
 *         .build())
 *     .build();
 * try (Response r = client.operation(request).execute()) { ... }
 * }</pre>
 *
 * <p>The wrapped client is not modified. The SDK derives a client from it with
 * {@link OkHttpClient#newBuilder()}, which shares its connection pool, dispatcher, event listener and
 * interceptors, and puts its own interceptors first: so the user's application interceptors run once
 * per attempt (an auth interceptor can refresh a token between attempts), and its network
 * interceptor sees every request that goes on the wire.
 *
 * <p>Immutable and thread-safe: share one instance, and {@link #close()} it when the application
 * stops (a Spring context does so on shutdown). Closing stops what the SDK started (its scheduler
 * thread) and refuses new operations; it leaves the wrapped client's dispatcher and connection pool
 * alone unless {@link Builder#closeOkHttpClientOnClose(boolean)} asked otherwise.
 */
public final class ResilientHttpClient implements AutoCloseable {
  private final ClientRuntime runtime;

  private ResilientHttpClient(Builder b) {
    io.github.resilienthttp.internal.async.ResumeTokenSigner signer = b.resumeTokenSigner();
    this.runtime = new ClientRuntime(new ClientSettings(b.okHttpClient, b.retryPolicy,
        b.classifier, b.idempotencyKeyPolicy, b.timeSource, b.random,
        b.retryBudget != null ? b.retryBudget : RetryBudget.tokenBucket(),
        b.circuitBreakerRegistry, b.circuitBreaker, b.circuitBreakerDisabled, b.sharedBreakers,
        b.bulkheadConfig, b.bulkheadName, b.listeners, b.replayHeader, b.scheduler,
        b.hedgingPolicy, signer, b.closeOkHttpClientOnClose, b.overload()), Operation::create,
        token -> token.signedWith(signer));
  }

  /**
   * Starts building a client around {@code okHttpClient}.
   *
   * <p>Wrapping a client that is already an SDK client ({@link #okHttpClient()} of another
   * {@code ResilientHttpClient}, or one derived from it) is refused: its calls are operations
   * already, so a second wrap would nest two retry loops, multiplying attempts (3 × 3 server
   * requests for one intent) and reporting each operation's end several times.
   *
   * @param okHttpClient the client to use for every attempt; not modified
   * @return a builder
   * @throws IllegalArgumentException when {@code okHttpClient} is an SDK client (see above)
   * @throws IllegalStateException when the OkHttp on the class path is older than 5.3.0 (for example
   *     4.12, brought by Retrofit 3.0.0 without a BOM); the message names the version found and the
   *     fix: import {@code io.github.resilienthttp:resilient-http-bom} or
   *     {@code com.squareup.okhttp3:okhttp-bom}
   */
  public static Builder wrap(OkHttpClient okHttpClient) {
    Objects.requireNonNull(okHttpClient, "okHttpClient");
    OkHttpVersionCheck.requireSupportedOkHttp();
    if (ClientRuntime.isSdkClient(okHttpClient)) {
      throw new IllegalArgumentException("okHttpClient is already a Resilient HTTP client (the"
          + " okHttpClient() of a ResilientHttpClient): wrapping it would nest two retry loops."
          + " Wrap the original client instead (sdkClient.wrappedClient()), or derive a differently"
          + " configured client with sdkClient.newBuilder()");
    }
    return new Builder(okHttpClient);
  }

  /**
   * A new operation for {@code request}, with a new idempotency key (or the key already in the
   * request's key header). Nothing is sent until {@link Operation#execute()}.
   *
   * @param request the request; its body is sent once per attempt
   * @return the operation, not yet executed
   * @throws IllegalArgumentException when the request's own key header is not a valid key
   * @throws IllegalStateException ("client closed") after {@link #close()}
   */
  public Operation operation(Request request) {
    Objects.requireNonNull(request, "request");
    if (runtime.lifecycle().isClosed()) {
      throw io.github.resilienthttp.internal.engine.ClientLifecycle.closedError();
    }
    return new Operation(runtime, request);
  }

  /**
   * Closes the client gracefully. From now on it starts nothing: {@link #operation(Request)}, and
   * {@code execute()}/{@code executeAsync()}/{@code awaitCompletion...}/{@code resume...} of an
   * operation made before, throw {@link IllegalStateException} ("client closed"); a plain call on
   * {@link #okHttpClient()} fails with {@link ResilientHttpException} (reason {@code client-closed},
   * nothing sent), the {@code IOException} OkHttp's callers expect.
   *
   * <p>Running operations: an attempt in flight finishes; if its answer is final (a success, or one
   * that is not retried) the caller gets it, otherwise no retry, poll or hedge starts and the
   * operation ends at once with {@link ResilientHttpException} reason {@code client-closed}
   * ({@link OutcomeUnknownException} with that reason when an earlier attempt may have reached the
   * server). An operation waiting between attempts, or for a bulkhead permit, wakes and ends so at
   * once (blocking: with the system {@link TimeSource}, or one that implements
   * {@link TimeSource#sleep(java.time.Duration, java.util.concurrent.Future)}). A 202 wait
   * ({@link Operation#awaitCompletion}) stops at once with {@link PollFailedException} reason
   * {@code client-closed}, which carries the resume token: another client can
   * {@link #resume(ResumeToken, AsyncOperationPolicy) resume} it. A response already returned stays
   * readable (the deadline still bounds its body).
   *
   * <p>Then the SDK's own scheduler (the default one, never a {@link Builder#scheduler user's}) is
   * shut down: its thread ends once no wait is left. The deadline's watchdog needs no stopping (it
   * runs on Okio's shared watchdog thread and stops sweeping about 1 s after the last watched
   * operation ended). The wrapped {@link OkHttpClient} is not touched unless
   * {@link Builder#closeOkHttpClientOnClose(boolean)}: it may be shared with other code.
   *
   * <p>Idempotent and thread-safe; returns without waiting for running operations to end. What a
   * listener throws while operations end is logged and does not stop the close.
   */
  @Override
  public void close() {
    runtime.close(false);
  }

  /**
   * Closes the client and cancels what runs on it: as {@link #close()}, and every attempt in flight
   * is cancelled too, so running operations end at once with {@link ResilientHttpException} reason
   * {@code client-closed} (or {@link OutcomeUnknownException} with that reason when an attempt may
   * have reached the server). A response already returned is not cancelled. May follow
   * {@link #close()} (to cut a graceful close short); idempotent and thread-safe.
   */
  public void closeNow() {
    runtime.close(true);
  }

  /**
   * Whether {@link #close()} or {@link #closeNow()} was called.
   *
   * @return whether the client is closed
   */
  public boolean isClosed() {
    return runtime.lifecycle().isClosed();
  }

  /**
   * Continues waiting for an accepted asynchronous operation from its {@link ResumeToken} (from
   * {@link ResumableFailure#resumeToken()}, {@link OperationListener#asyncOperationAccepted}, or
   * {@link ResumeToken#parse(String)} in a restarted process), as
   * {@link Operation#awaitCompletion(AsyncOperationPolicy)} would: the first poll starts at once, and
   * the deadline ({@link AsyncOperationPolicy#deadline()}, or the retry policy's) starts now. There is
   * no submit request to carry headers from: credentials come from the wrapped client's
   * interceptors, or from {@link AsyncOperationPolicy#followUpHeaders()} (sent to the token's origin
   * only). The token must verify ({@link #verifyResumeToken}); every poll and the result fetch stay
   * on the token's origin ({@link AsyncOperationPolicy#allowOtherOrigins()}). A key older than
   * {@link AsyncOperationPolicy#keyRetention()} is warned about or refused first.
   *
   * @param token an accepted operation's token ({@link ResumeToken#isAccepted()})
   * @param policy how to wait
   * @return the final result, which the caller must close
   * @throws KeyRetentionExceededException when the key is too old and the policy refuses
   * @throws InvalidResumeTokenException when this client refuses the token (nothing is sent)
   * @throws IllegalArgumentException when the token was not accepted: re-submit with
   *     {@link #resume(ResumeToken, Request, AsyncOperationPolicy)}
   * @throws java.io.IOException as {@link Operation#awaitCompletion(AsyncOperationPolicy)}
   */
  public okhttp3.Response resume(ResumeToken token, AsyncOperationPolicy policy) throws java.io.IOException {
    return resumption().resumption(token, null, policy).execute();
  }

  /**
   * Continues an intent from its {@link ResumeToken}: an accepted one is waited for
   * ({@link #resume(ResumeToken, AsyncOperationPolicy)}, {@code request} unused); one that was not
   * (or whose acceptance was never seen) is re-submitted with the token's key, so that a server that
   * keeps keys answers with the first outcome instead of doing the work twice, and then waited for.
   *
   * @param token the token
   * @param request the original request, with its body (the token holds none); same method and URL
   * @param policy how to wait
   * @return the final result, which the caller must close
   * @throws KeyRetentionExceededException when the key is too old and the policy refuses
   * @throws IllegalArgumentException when {@code request} is not the token's, or re-submitting is
   *     not safe (no key was sent and the method is not idempotent)
   * @throws java.io.IOException as {@link Operation#awaitCompletion(AsyncOperationPolicy)}
   */
  public okhttp3.Response resume(ResumeToken token, Request request, AsyncOperationPolicy policy)
      throws java.io.IOException {
    return resumption().resumption(token, request, policy).execute();
  }

  /**
   * {@link #resume(ResumeToken, AsyncOperationPolicy)} without holding a thread.
   *
   * @param token an accepted operation's token
   * @param policy how to wait
   * @return a future of the final result; cancelling it stops polling
   * @throws IllegalArgumentException when the token was not accepted
   */
  public java.util.concurrent.CompletableFuture<okhttp3.Response> resumeAsync(ResumeToken token,
      AsyncOperationPolicy policy) {
    return resumption().resumeAsync(token, null, policy);
  }

  /**
   * {@link #resume(ResumeToken, Request, AsyncOperationPolicy)} without holding a thread.
   *
   * @param token the token
   * @param request the original request, with its body
   * @param policy how to wait
   * @return a future of the final result; cancelling it stops polling
   * @throws IllegalArgumentException as the blocking variant
   */
  public java.util.concurrent.CompletableFuture<okhttp3.Response> resumeAsync(ResumeToken token,
      Request request, AsyncOperationPolicy policy) {
    return resumption().resumeAsync(token, request, policy);
  }

  /**
   * {@link #cancelOnServer(ResumeToken, AsyncOperationPolicy)} with
   * {@link AsyncOperationPolicy#defaults()}: {@code DELETE} on the token's cancel URL.
   *
   * @param token the accepted operation's token, with the cancel URL the server gave
   * @return the server's answer to the cancel, which the caller must close
   * @throws IllegalStateException when the server gave no cancel URL: nothing is sent
   * @throws java.io.IOException as the blocking variant
   */
  public okhttp3.Response cancelOnServer(ResumeToken token) throws java.io.IOException {
    return cancelOnServer(token, AsyncOperationPolicy.defaults());
  }

  /**
   * Asks the server to cancel the job behind an accepted asynchronous operation, with the cancel URL
   * it gave ({@link ResumeToken#cancelUrl()}, found by {@link AsyncOperationPolicy#cancelLocator()}
   * in the {@code 202} or a status answer). Cancelling the wait ({@link Operation#cancel()}, or the
   * future) only stops polling; this is the only call that reaches the server's job, and only when the
   * server said how.
   *
   * <p>The cancel is an ordinary operation of this client: {@link AsyncOperationPolicy#cancelMethod()}
   * ({@code DELETE} by default, retried on transient failure; {@code POST} is not re-sent once its
   * outcome is unknown), classified, bounded by the budget, the breaker and the bulkhead, with
   * {@link AsyncOperationPolicy#deadline()} or the retry policy's. It carries the submit's key for
   * listeners but does not send it (a server that keeps keys would answer with the submit's response).
   * A cancel URL on another origin than the submit's is refused, like a status URL, unless
   * {@link AsyncOperationPolicy#allowOtherOrigins()}, and so is a redirect of the cancel elsewhere;
   * the token must verify ({@link #verifyResumeToken}). Credentials come from the wrapped client's
   * interceptors or {@link AsyncOperationPolicy#followUpHeaders()} (to the token's origin only). Whether the job stops is the server's answer
   * (often {@code 200}/{@code 202}/{@code 204}; {@code 409} when it already finished): a later poll
   * ({@link #resume(ResumeToken, AsyncOperationPolicy)}) reads the state it ended in.
   *
   * @param token the accepted operation's token, with the cancel URL the server gave
   * @param policy the cancel method, the deadline and the origin rule
   * @return the server's answer to the cancel, which the caller must close
   * @throws IllegalStateException when the server gave no cancel URL: nothing is sent
   * @throws PollFailedException (reason {@code other-origin}) when the cancel URL is on another origin:
   *     nothing is sent
   * @throws java.io.IOException as {@link Operation#execute()}
   */
  public okhttp3.Response cancelOnServer(ResumeToken token, AsyncOperationPolicy policy)
      throws java.io.IOException {
    return cancelOnServer(token, null, policy);
  }

  /**
   * {@link #cancelOnServer(ResumeToken, AsyncOperationPolicy)} carrying the submit's own headers
   * that {@link AsyncOperationPolicy#carryHeaders()} names (by default {@code Authorization}), as
   * polls do: to the submit's origin only.
   *
   * @param token the accepted operation's token, with the cancel URL the server gave
   * @param submit the submit's request (same method and URL as the token's), or {@code null}
   * @param policy the cancel method, the deadline, the origin rule and the headers to carry
   * @return the server's answer to the cancel, which the caller must close
   * @throws IllegalArgumentException when {@code submit} is not the token's request
   * @throws java.io.IOException as {@link #cancelOnServer(ResumeToken, AsyncOperationPolicy)}
   */
  public okhttp3.Response cancelOnServer(ResumeToken token, Request submit,
      AsyncOperationPolicy policy) throws java.io.IOException {
    return resumption().cancelOnServer(token, submit, policy);
  }

  /**
   * {@code token} if this client may act on it: signed with one of its
   * {@link Builder#resumeTokenKey(byte[], byte[]...) keys} (or unsigned, on an origin given to
   * {@link Builder#acceptUnsignedResumeTokens}), its key made no later than this client's clock
   * (plus a minute of skew). The result is bound to this client: its {@link ResumeToken#toText()}
   * is signed with the current (first) key. Every method of this client that takes a token calls
   * this first, so calling it yourself is for migration: re-sign stored tokens after a key rotation,
   * or unsigned tokens of an earlier version ({@code store(verifyResumeToken(ResumeToken.parse(old))
   * .toText())}).
   *
   * @param token the token
   * @return the token, signed by this client
   * @throws InvalidResumeTokenException (reason {@code unsigned}, {@code bad-signature} or
   *     {@code key-time-in-future}) when refused
   */
  public ResumeToken verifyResumeToken(ResumeToken token) {
    Objects.requireNonNull(token, "token");
    return token.verifiedBy(runtime.resumeTokenSigner(), runtime.timeSource().now());
  }

  /**
   * A new operation that repeats the intent of a failed one: {@code request} (the same method, URL
   * and body; the failure holds none) with the failure's idempotency key, sent or not as before, so
   * that a server that keeps keys answers with the first outcome instead of doing the work twice.
   * Nothing is sent until the operation is executed (or awaited).
   *
   * <p>Refused when it is not safe: the key was never sent ({@link
   * OperationFailure#idempotencyKeySent()} is {@code false}, e.g. {@code sendIdempotencyKey(false)} or
   * a key policy that does not send keys for this method) and the method is not idempotent (RFC 9110
   * §9.2.2). Then the server has never seen the key, so re-sending it would not deduplicate: a POST
   * that did run would run again. Find out first (an {@link OutcomeQueryPolicy outcome query}, or the
   * server's own records). For an accepted asynchronous operation, {@link #resume(ResumeToken,
   * AsyncOperationPolicy)} with {@link ResumableFailure#resumeToken()} continues the wait instead
   * of re-submitting.
   *
   * <pre>{@code
   * try (Response r = client.operation(request).execute()) {
   *   use(r);
   * } catch (OutcomeUnknownException e) {
   *   if (!e.idempotencyKeySent()) {
   *     throw e; // a key the server never saw proves nothing: settle the outcome first
   *   }
   *   try (Response r = client.retry(e, request).execute()) { // the server deduplicates
   *     use(r);
   *   }
   * }
   * }</pre>
   *
   * @param failure the failure of the first operation (any exception the SDK threw for it)
   * @param request the first operation's request, with its body
   * @return the operation, not yet executed
   * @throws RetryRefusedException (reason {@code key-not-sent}) when repeating is not safe; nothing
   *     is sent
   */
  public Operation retry(OperationFailure failure, Request request) {
    Objects.requireNonNull(failure, "failure");
    Objects.requireNonNull(request, "request");
    if (!safeToResend(failure.idempotencyKeySent(), request.method())) {
      throw new RetryRefusedException(failure, request.method());
    }
    Operation op = operation(request).idempotencyKey(failure.idempotencyKey());
    if (!failure.idempotencyKeySent()) {
      op.sendIdempotencyKey(false);
    }
    return op;
  }

  /** Whether re-sending with the same key is safe: the server saw the key, or the method is idempotent. */
  static boolean safeToResend(boolean keySent, String method) {
    return io.github.resilienthttp.internal.engine.KeyDecision.idempotent(keySent, method);
  }

  private Resumption resumption() {
    return new Resumption(runtime, Operation::awaiting, this::verifyResumeToken);
  }

  /**
   * A builder with this client's settings, to derive a differently configured client. The derived
   * client shares this one's retry budget and circuit breakers (they are runtime state), but gets its
   * own bulkhead, and its own adaptive throttle counts, concurrency limits and rate-limit pauses.
   *
   * @return a builder with these settings
   */
  public Builder newBuilder() {
    ClientSettings s = runtime.settings();
    Builder b = new Builder(s.wrapped());
    b.retryPolicy = s.retryPolicy();
    b.classifier = s.classifier();
    b.idempotencyKeyPolicy = s.idempotencyKeyPolicy();
    b.timeSource = s.timeSource();
    b.random = s.random();
    b.retryBudget = s.retryBudget();
    b.replayHeader = s.replayHeader();
    b.scheduler = s.scheduler();
    b.hedgingPolicy = s.hedgingPolicy();
    b.circuitBreakerRegistry = s.circuitBreakerRegistry();
    b.circuitBreaker = s.circuitBreaker();
    b.circuitBreakerDisabled = s.circuitBreakerDisabled();
    if (!s.circuitBreakerDisabled() && s.circuitBreaker() == null) {
      b.sharedBreakers = runtime.circuitBreakers(); // runtime state: shared, as the budget
    }
    b.inheritedSigner = s.resumeTokenSigner();
    b.unsignedTokenOrigins = s.resumeTokenSigner().unsignedOrigins();
    b.bulkheadConfig = s.bulkheadConfig();
    b.bulkheadName = s.bulkheadName();
    b.adaptiveThrottling = s.overload().throttling();
    b.concurrencyLimit = s.overload().concurrencyLimit();
    b.rateLimitPacing = s.overload().rateLimitPacing();
    b.listeners.addAll(s.listeners());
    return b;
  }

  /**
   * The SDK's default circuit breaker settings, used when no registry or breaker is given: open when
   * at least 80 % of the last 50 attempts failed (at least 50 recorded), stay open 5 s, then let 3
   * probes through. A total outage opens it after 50 attempts; a steady partial failure rate (20 %,
   * even 50 %) practically never does. Why these values: {@code docs/design/circuit-breaker.md}.
   *
   * @return a new config with the SDK's defaults
   */
  public static CircuitBreakerConfig defaultCircuitBreakerConfig() {
    return CircuitBreakerConfig.custom()
        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        .slidingWindowSize(50)
        .minimumNumberOfCalls(50)
        .failureRateThreshold(80)
        .waitDurationInOpenState(java.time.Duration.ofSeconds(5))
        .permittedNumberOfCallsInHalfOpenState(3)
        .build();
  }

  /**
   * The retry budget shared by all operations of this client.
   *
   * @return the retry budget
   */
  public RetryBudget retryBudget() {
    return runtime.retryBudget();
  }

  /**
   * The resilience4j circuit breaker that guards {@code url}'s target ({@code scheme://host:port}),
   * or empty when breakers are off. For metrics and tests. Per-target breakers are bounded (at most
   * 1,024 targets, the least recently used evicted), so a breaker seen here may be replaced by a new
   * one after its target was idle. The default registry's breakers skip a fast success while their
   * window is full of them, which changes none of their figures; an outcome you record in such a
   * breaker yourself is noticed at a re-check (one success in 64 on average), and an event
   * consumer you register makes the SDK record every attempt (docs/design/circuit-breaker.md).
   *
   * @param url a URL of the target
   * @return the breaker, or empty
   */
  public java.util.Optional<CircuitBreaker> circuitBreakerFor(okhttp3.HttpUrl url) {
    TargetCircuitBreakers breakers = runtime.circuitBreakers();
    return breakers == null ? java.util.Optional.empty()
        : java.util.Optional.of(breakers.forUrl(url).breaker());
  }

  /**
   * The resilience4j bulkhead limiting concurrent attempts, when configured.
   *
   * @return the bulkhead, or empty
   */
  public java.util.Optional<io.github.resilience4j.bulkhead.Bulkhead> bulkhead() {
    BulkheadGate gate = runtime.bulkheadGate();
    return gate == null ? java.util.Optional.empty() : java.util.Optional.of(gate.bulkhead());
  }

  /**
   * The current adaptive concurrency limit of {@code target}'s {@code scheme://host:port}
   * ({@link Builder#concurrencyLimit(ConcurrencyLimitPolicy)}), for dashboards and tests. Thread
   * safe; the value may change at any moment.
   *
   * @param target any URL of the target
   * @return the limit, or empty when the client has no adaptive limit or has not sent to the
   *     target yet
   */
  public java.util.OptionalInt currentConcurrencyLimit(okhttp3.HttpUrl target) {
    io.github.resilienthttp.internal.guard.TargetOverload o = runtime.overload();
    return o == null ? java.util.OptionalInt.empty() : o.limit(Objects.requireNonNull(target, "target"));
  }

  /**
   * The response header by which a server marks a replayed result.
   *
   * @return the replay header name
   */
  public String replayHeader() {
    return runtime.replayHeader();
  }

  /** {@return the retry policy} */
  public RetryPolicy retryPolicy() {
    return runtime.retryPolicy();
  }

  /** {@return the response classifier} */
  public ResponseClassifier classifier() {
    return runtime.classifier();
  }

  /** {@return the idempotency key policy} */
  public IdempotencyKeyPolicy idempotencyKeyPolicy() {
    return runtime.idempotencyKeyPolicy();
  }

  /** {@return the clock and sleeper} */
  public TimeSource timeSource() {
    return runtime.timeSource();
  }

  /**
   * The wrapped client, as given.
   *
   * @return the wrapped client
   */
  public OkHttpClient wrappedClient() {
    return runtime.wrapped();
  }

  /** The runtime behind this façade; for the SDK's own tests (package-private, not API). */
  ClientRuntime runtime() {
    return runtime;
  }

  /**
   * An {@link OkHttpClient} whose every call is one operation of this client: key, classified
   * retries, deadline, budget, breaker and bulkhead, so that {@code newCall(request).execute()},
   * {@code enqueue(...)} and Retrofit services built on it get resilience with no other change.
   * Per-call settings (key, deadline, opt-out) come from an {@link OperationOptions} request tag.
   *
   * <p>It shares the wrapped client's connection pool and dispatcher. Two differences from
   * {@link Operation}: a call made with {@code enqueue} waits between attempts on an OkHttp
   * dispatcher thread (use {@link Operation#executeAsync()} to hold no thread while waiting); and the
   * SDK does not set the call's timeout: the wrapped client's {@code callTimeout}, when set, bounds
   * the whole call including every retry and wait (OkHttp then throws its own
   * {@code InterruptedIOException("timeout")}), so keep it at least as long as the deadline, or leave
   * it at 0 and let the SDK's deadline bound the attempts and waits.
   *
   * @return the SDK's client; the same instance on every call
   */
  public OkHttpClient okHttpClient() {
    return runtime.forOperations();
  }

  /** Builds a {@link ResilientHttpClient}. Not thread-safe. */
  public static final class Builder {
    private final OkHttpClient okHttpClient;
    private RetryPolicy retryPolicy = RetryPolicy.defaults();
    private ResponseClassifier classifier = ResponseClassifier.defaults();
    private IdempotencyKeyPolicy idempotencyKeyPolicy = IdempotencyKeyPolicy.defaults();
    private TimeSource timeSource = TimeSource.system();
    private RandomGenerator random = ThreadLocalJitter.INSTANCE;
    private RetryBudget retryBudget;
    private CircuitBreakerRegistry circuitBreakerRegistry;
    private CircuitBreaker circuitBreaker;
    private boolean circuitBreakerDisabled;
    private TargetCircuitBreakers sharedBreakers;
    private BulkheadConfig bulkheadConfig;
    private String bulkheadName = "resilient-http";
    private AdaptiveThrottlingPolicy adaptiveThrottling;
    private ConcurrencyLimitPolicy concurrencyLimit;
    private boolean rateLimitPacing;
    private final List<OperationListener> listeners = new ArrayList<>();
    private HedgingPolicy hedgingPolicy;
    private String replayHeader = "Idempotent-Replayed";
    private ScheduledExecutorService scheduler;
    private List<byte[]> resumeTokenKeys;
    private boolean closeOkHttpClientOnClose;
    private java.util.Set<String> unsignedTokenOrigins = java.util.Set.of();
    /** The signer of the client this builder came from ({@link #newBuilder()}), kept unless keys are set. */
    private io.github.resilienthttp.internal.async.ResumeTokenSigner inheritedSigner;

    private Builder(OkHttpClient okHttpClient) {
      this.okHttpClient = okHttpClient;
    }

    /**
     * Default {@link RetryPolicy#defaults()}.
     *
     * @param retryPolicy the retry policy
     * @return this builder
     */
    public Builder retryPolicy(RetryPolicy retryPolicy) {
      this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
      return this;
    }

    /**
     * Default {@link ResponseClassifier#defaults()}.
     *
     * @param classifier the classifier
     * @return this builder
     */
    public Builder classifier(ResponseClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /**
     * Default {@link IdempotencyKeyPolicy#defaults()}.
     *
     * @param idempotencyKeyPolicy the key policy
     * @return this builder
     */
    public Builder idempotencyKeys(IdempotencyKeyPolicy idempotencyKeyPolicy) {
      this.idempotencyKeyPolicy = Objects.requireNonNull(idempotencyKeyPolicy, "idempotencyKeyPolicy");
      return this;
    }

    /**
     * The clock and sleeper. Default {@link TimeSource#system()}; tests inject a fake.
     *
     * @param timeSource the time source
     * @return this builder
     */
    public Builder timeSource(TimeSource timeSource) {
      this.timeSource = Objects.requireNonNull(timeSource, "timeSource");
      return this;
    }

    /**
     * The random source for backoff jitter; must be thread-safe, since all operations of the client
     * share it. Default: {@link ThreadLocalRandom} of the calling thread. Tests inject a seeded one.
     *
     * @param random a thread-safe random source
     * @return this builder
     */
    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * The retry budget: shared by all operations of the client, and shareable between clients.
     * Default: a new {@link RetryBudget#tokenBucket()} per client (retry ratio 0.1, a floor of 3
     * retries per second, 30 tokens).
     *
     * @param retryBudget the budget
     * @return this builder
     */
    public Builder retryBudget(RetryBudget retryBudget) {
      this.retryBudget = Objects.requireNonNull(retryBudget, "retryBudget");
      return this;
    }

    /**
     * One resilience4j circuit breaker per target ({@code scheme://host:port}), named after it, from
     * {@code registry} (whose default config applies, or a config registered under the target's
     * name). Default: a new registry per client with {@link #defaultCircuitBreakerConfig()}.
     *
     * @param registry the registry to take breakers from
     * @return this builder
     */
    public Builder circuitBreakerRegistry(CircuitBreakerRegistry registry) {
      this.circuitBreakerRegistry = Objects.requireNonNull(registry, "registry");
      this.circuitBreaker = null;
      this.circuitBreakerDisabled = false;
      this.sharedBreakers = null;
      return this;
    }

    /**
     * One breaker for every target of this client.
     *
     * @param breaker the breaker
     * @return this builder
     */
    public Builder circuitBreaker(CircuitBreaker breaker) {
      this.circuitBreaker = Objects.requireNonNull(breaker, "breaker");
      this.circuitBreakerRegistry = null;
      this.circuitBreakerDisabled = false;
      this.sharedBreakers = null;
      return this;
    }

    /**
     * No circuit breaker.
     *
     * @return this builder
     */
    public Builder noCircuitBreaker() {
      this.circuitBreakerDisabled = true;
      this.circuitBreaker = null;
      this.circuitBreakerRegistry = null;
      this.sharedBreakers = null;
      return this;
    }

    /**
     * Limits concurrent in-flight attempts of this client with a resilience4j semaphore bulkhead:
     * {@link BulkheadConfig#getMaxConcurrentCalls()} permits; an attempt waits for a permit at most
     * {@link BulkheadConfig#getMaxWaitDuration()} and never past its operation's deadline, then fails
     * with {@link BulkheadFullException}. A permit is held during an attempt only, not during the
     * backoff between attempts, so sleeping operations do not block others. Default: no bulkhead.
     *
     * @param config the bulkhead configuration
     * @return this builder
     */
    public Builder bulkhead(BulkheadConfig config) {
      this.bulkheadConfig = Objects.requireNonNull(config, "config");
      return this;
    }

    /**
     * Throttles attempts on the client side, per target, when the target has been refusing work
     * ({@link AdaptiveThrottlingPolicy}: the rule of Google's SRE book, "Handling Overload"). A
     * refused attempt is never sent; the operation ends with {@link ThrottledException}. Default
     * off. The throttle's clock and draws are the client's {@link #timeSource} and {@link #random}.
     *
     * @param policy the throttling policy
     * @return this builder
     */
    public Builder adaptiveThrottling(AdaptiveThrottlingPolicy policy) {
      this.adaptiveThrottling = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Limits concurrent attempts per target with a limit that adapts to the target's latency
     * ({@link ConcurrencyLimitPolicy}: Netflix concurrency-limits' Vegas or gradient algorithm):
     * an alternative to {@link #bulkhead(BulkheadConfig)}, which is fixed and per client. An attempt
     * beyond the limit is not sent and does not wait; the operation ends with
     * {@link ConcurrencyLimitExceededException}. Needs
     * {@code com.netflix.concurrency-limits:concurrency-limits-core} on the class path. Default off.
     *
     * @param policy the limit's policy
     * @return this builder
     */
    public Builder concurrencyLimit(ConcurrencyLimitPolicy policy) {
      this.concurrencyLimit = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Paces attempts by the server's rate-limit fields: when an answer says the quota is used up
     * ({@code remaining} 0) until a reset {@code R} seconds away (the IETF httpapi
     * {@code RateLimit} field, its earlier drafts' {@code RateLimit-Remaining}/{@code -Reset}, or
     * {@code X-RateLimit-Remaining}/{@code -Reset}), the next attempts to that target (of this
     * operation and of others) wait until the reset. The wait stays inside the deadline: an attempt
     * that could not start before it is not made, and the operation ends as at its deadline (the
     * last answer returned if there is one, else {@link DeadlineExceededException}). {@code
     * execute()} waits on the caller's thread, {@code executeAsync()} on the client's scheduler
     * (no thread held); a plain call on {@link ResilientHttpClient#okHttpClient()} waits where its
     * retries wait, on the thread that runs the call. Default {@code false}.
     *
     * @param enabled whether to pace
     * @return this builder
     */
    public Builder rateLimitPacing(boolean enabled) {
      this.rateLimitPacing = enabled;
      return this;
    }

    private io.github.resilienthttp.internal.guard.OverloadSettings overload() {
      return new io.github.resilienthttp.internal.guard.OverloadSettings(adaptiveThrottling,
          concurrencyLimit, rateLimitPacing);
    }

    /**
     * The scheduler on which {@link Operation#executeAsync()} waits between attempts (and for a
     * bulkhead permit). Tasks are short and never block. Default: one daemon thread per client,
     * created on first use and ended after 2 s without waits.
     *
     * @param scheduler the scheduler; the SDK never shuts it down
     * @return this builder
     */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Whether {@link ResilientHttpClient#close()} also releases the wrapped {@link OkHttpClient}'s
     * resources, as OkHttp's documentation describes: shuts its dispatcher's executor down, evicts
     * its connection pool and closes its cache. Only for a wrapped client this client owns: the
     * wrapped client and every client derived from it with {@code newBuilder()} (other SDK clients
     * included) share that dispatcher and pool. Default {@code false}: the wrapped client is never
     * touched. Not carried over by {@link ResilientHttpClient#newBuilder()}: the client that owns the
     * wrapped one is the one that releases it.
     *
     * @param close whether close releases the wrapped client's resources
     * @return this builder
     */
    public Builder closeOkHttpClientOnClose(boolean close) {
      this.closeOkHttpClientOnClose = close;
      return this;
    }

    /**
     * Hedges the client's idempotent operations ({@link HedgingPolicy}): when an attempt has not
     * answered within the policy's delay, a copy is sent and the first acceptable answer wins.
     * Default: no hedging. An operation can override it ({@link Operation#hedging}).
     *
     * @param policy the hedging policy
     * @return this builder
     */
    public Builder hedging(HedgingPolicy policy) {
      this.hedgingPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Adds a listener; listeners are called in the order added.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder addListener(OperationListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * The response header by which the server marks a replayed result (value {@code true}).
     * Default {@code Idempotent-Replayed}.
     *
     * @param replayHeader the header name
     * @return this builder
     */
    public Builder replayHeader(String replayHeader) {
      this.replayHeader = Objects.requireNonNull(replayHeader, "replayHeader");
      return this;
    }

    /**
     * The keys that sign and verify this client's {@link ResumeToken resume tokens}: HMAC-SHA256
     * with {@code signingKey}; tokens signed with any of {@code alsoAccepted} are accepted too. To
     * rotate: put the new key first and the old one in {@code alsoAccepted}, re-sign stored tokens
     * with {@link ResilientHttpClient#verifyResumeToken} (or let them expire), then drop the old
     * key. Every process that resumes another's tokens needs the same keys; keep them with the
     * application's other secrets. Default: a random key of this client's own, made at
     * {@link #build()} and shared by {@link ResilientHttpClient#newBuilder()} clients, so tokens
     * resume only in this process (a restarted one refuses them: reason {@code bad-signature}).
     *
     * @param signingKey at least 32 random bytes (256 bits); copied
     * @param alsoAccepted earlier keys, accepted but no longer used to sign; copied
     * @return this builder
     * @throws IllegalArgumentException when a key is shorter than 32 bytes
     */
    public Builder resumeTokenKey(byte[] signingKey, byte[]... alsoAccepted) {
      List<byte[]> keys = new ArrayList<>();
      keys.add(Objects.requireNonNull(signingKey, "signingKey").clone());
      for (byte[] k : Objects.requireNonNull(alsoAccepted, "alsoAccepted")) {
        keys.add(Objects.requireNonNull(k, "alsoAccepted key").clone());
      }
      io.github.resilienthttp.internal.async.ResumeTokenSigner.of(keys, java.util.Set.of()); // validates now
      this.resumeTokenKeys = keys;
      return this;
    }

    /**
     * Accepts unsigned resume tokens (the {@code rhr1.} text and serialized form of versions before
     * signed tokens, or tokens built with {@link ResumeToken#forSubmit}) whose URLs are all on one of
     * {@code origins}: the migration path for stored tokens. Such a token is as trustworthy as the
     * store it came from, so name only the origins of your own APIs, and re-sign what you read
     * ({@link ResilientHttpClient#verifyResumeToken}) so that the opt-in can be removed. Default
     * none: every unsigned token is refused (reason {@code unsigned}).
     *
     * @param origins URLs whose scheme, host and port are trusted (path ignored)
     * @return this builder
     */
    public Builder acceptUnsignedResumeTokens(java.util.Collection<okhttp3.HttpUrl> origins) {
      java.util.Set<String> set = new java.util.LinkedHashSet<>();
      for (okhttp3.HttpUrl u : Objects.requireNonNull(origins, "origins")) {
        set.add(io.github.resilienthttp.internal.okhttp.OriginGuard.originOf(
            Objects.requireNonNull(u, "origin")));
      }
      this.unsignedTokenOrigins = java.util.Set.copyOf(set);
      return this;
    }

    private io.github.resilienthttp.internal.async.ResumeTokenSigner resumeTokenSigner() {
      if (resumeTokenKeys != null) {
        return io.github.resilienthttp.internal.async.ResumeTokenSigner.of(resumeTokenKeys,
            unsignedTokenOrigins);
      } else if (inheritedSigner != null) {
        return inheritedSigner.unsignedOrigins().equals(unsignedTokenOrigins) ? inheritedSigner
            : inheritedSigner.withUnsignedOrigins(unsignedTokenOrigins);
      }
      return io.github.resilienthttp.internal.async.ResumeTokenSigner.random(
          new java.security.SecureRandom(), unsignedTokenOrigins);
    }

    /**
     * Builds the client.
     *
     * @return the client
     * @throws IllegalArgumentException when the replay header name is empty, or both a bulkhead and
     *     a concurrency limit are set
     * @throws IllegalStateException when a concurrency limit is set and Netflix's
     *     concurrency-limits is not on the class path
     */
    public ResilientHttpClient build() {
      if (bulkheadConfig != null && concurrencyLimit != null) {
        throw new IllegalArgumentException("bulkhead(" + bulkheadConfig.getMaxConcurrentCalls()
            + " calls) and concurrencyLimit(" + concurrencyLimit + ") are alternatives: set one");
      }
      if (replayHeader.isEmpty() || !IdempotencyKeyPolicy.Builder.isToken(replayHeader)) {
        throw new IllegalArgumentException("replayHeader must be an HTTP token (RFC 9110 §5.6.2)"
            + " but was '" + replayHeader + "'");
      }
      return new ResilientHttpClient(this);
    }
  }

  /** Jitter from the calling thread's {@link ThreadLocalRandom}: thread-safe, contention-free. */
  private static final class ThreadLocalJitter implements RandomGenerator {
    static final ThreadLocalJitter INSTANCE = new ThreadLocalJitter();

    @Override
    public long nextLong() {
      return ThreadLocalRandom.current().nextLong();
    }

    @Override
    public long nextLong(long bound) {
      return ThreadLocalRandom.current().nextLong(bound);
    }

    @Override
    public String toString() {
      return "ThreadLocalRandom";
    }
  }
}

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
 * <p>Immutable and thread-safe: share one instance.
 */
public final class ResilientHttpClient {
  private final ClientRuntime runtime;

  private ResilientHttpClient(Builder b) {
    this.runtime = new ClientRuntime(new ClientSettings(b.okHttpClient, b.retryPolicy,
        b.classifier, b.idempotencyKeyPolicy, b.timeSource, b.random,
        b.retryBudget != null ? b.retryBudget : RetryBudget.tokenBucket(),
        b.circuitBreakerRegistry, b.circuitBreaker, b.circuitBreakerDisabled, b.sharedBreakers,
        b.bulkheadConfig, b.bulkheadName, b.listeners, b.replayHeader, b.scheduler,
        b.hedgingPolicy), Operation::create);
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
   */
  public Operation operation(Request request) {
    return new Operation(runtime, Objects.requireNonNull(request, "request"));
  }

  /**
   * Continues waiting for an accepted asynchronous operation from its {@link ResumeToken} (from
   * {@link ResumableFailure#resumeToken()}, {@link OperationListener#asyncOperationAccepted}, or
   * {@link ResumeToken#parse(String)} in a restarted process), as
   * {@link Operation#awaitCompletion(AsyncOperationPolicy)} would: the first poll starts at once, and
   * the deadline ({@link AsyncOperationPolicy#deadline()}, or the retry policy's) starts now. Polls
   * carry no header of the original request: credentials come from the wrapped client's
   * interceptors. A key older than {@link AsyncOperationPolicy#keyRetention()} is warned about or
   * refused first.
   *
   * @param token an accepted operation's token ({@link ResumeToken#isAccepted()})
   * @param policy how to wait
   * @return the final result, which the caller must close
   * @throws KeyRetentionExceededException when the key is too old and the policy refuses
   * @throws IllegalArgumentException when the token was not accepted: re-submit with
   *     {@link #resume(ResumeToken, Request, AsyncOperationPolicy)}
   * @throws java.io.IOException as {@link Operation#awaitCompletion(AsyncOperationPolicy)}
   */
  public okhttp3.Response resume(ResumeToken token, AsyncOperationPolicy policy) throws java.io.IOException {
    return resumption().resume(token, policy);
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
    return resumption().resume(token, request, policy);
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
    return resumption().resumeAsync(token, policy);
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
   * {@link AsyncOperationPolicy#allowOtherOrigins()}. Whether the job stops is the server's answer
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
    return resumption().cancelOnServer(token, policy);
  }

  private Resumption resumption() {
    return new Resumption(runtime, Operation::newWaiter);
  }

  /**
   * A builder with this client's settings, to derive a differently configured client. The derived
   * client shares this one's retry budget and circuit breakers (they are runtime state), but gets its
   * own bulkhead.
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
    b.bulkheadConfig = s.bulkheadConfig();
    b.bulkheadName = s.bulkheadName();
    b.listeners.addAll(s.listeners());
    return b;
  }

  /**
   * The SDK's default circuit breaker settings, used when no registry or breaker is given: open when
   * at least 80 % of the last 50 attempts failed (at least 50 recorded), stay open 5 s, then let 3
   * probes through. The breaker is for persistent failure (an outage); partial failure is the retry
   * loop's and the budget's job, so the threshold is high: a steady 20 % or even 50 % failure rate
   * practically never opens it (at 50 %, 40 failures out of 50 is about a one-in-100,000 window),
   * while a total outage opens it after 50 attempts. resilience4j's own defaults (50 % of 100 calls,
   * 60 s open) would keep a recovered service unused for up to a minute.
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
   * 1,024 targets; the least recently used is evicted, see README "Circuit breaker"), so a breaker
   * seen here may be replaced by a new one after its target was idle.
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
    private final List<OperationListener> listeners = new ArrayList<>();
    private HedgingPolicy hedgingPolicy;
    private String replayHeader = "Idempotent-Replayed";
    private ScheduledExecutorService scheduler;

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
     * Builds the client.
     *
     * @return the client
     * @throws IllegalArgumentException when the replay header name is empty
     */
    public ResilientHttpClient build() {
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

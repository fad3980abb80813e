package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.internal.deadline.DeadlineWatchdog;
import io.github.resilienthttp.internal.guard.BulkheadGate;
import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import io.github.resilienthttp.internal.async.ResumeTokenSigner;
import io.github.resilienthttp.internal.okhttp.AttemptSetupInterceptor;
import io.github.resilienthttp.internal.okhttp.NetworkAttemptTracker;
import io.github.resilienthttp.internal.okhttp.RetryInterceptor;
import io.github.resilienthttp.internal.okhttp.WireListener;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;

/**
 * What a {@link io.github.resilienthttp.ResilientHttpClient} runs on: its settings, its runtime
 * state (retry budget, breakers, bulkhead, deadline watchdog, key generator, scheduler) and the
 * OkHttp clients derived from the wrapped one. The public client is a façade over this. Immutable
 * but for the lazily made default scheduler; thread-safe. Not API.
 */
public final class ClientRuntime {
  private final OkHttpClient wrapped;
  private final RetryPolicy retryPolicy;
  private final ResponseClassifier classifier;
  private final IdempotencyKeyPolicy idempotencyKeyPolicy;
  private final TimeSource timeSource;
  private final RandomGenerator random;
  private final RetryBudget retryBudget;
  private final TargetCircuitBreakers circuitBreakers;
  private final BulkheadGate bulkhead;
  private final io.github.resilienthttp.internal.guard.TargetOverload overload;
  private final Listeners listeners;
  private final String replayHeader;
  private final DeadlineWatchdog deadlineWatchdog = new DeadlineWatchdog();
  private final KeyGenerator keyGenerator = new KeyGenerator();
  private final TargetLatencies latencies = new TargetLatencies();
  private final java.util.concurrent.atomic.AtomicBoolean dispatcherQueueWarned =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final HedgingPolicy hedgingPolicy;
  private final OperationFactory operations;
  /** Binds a token this client hands out to its signer (a package-private step of the API). */
  private final java.util.function.UnaryOperator<io.github.resilienthttp.ResumeToken> tokenBinder;
  private final ClientSettings settings;
  private final boolean systemTime;
  private final ResumeTokenSigner resumeTokenSigner;
  /** Plain calls: every call is an operation, run by {@link RetryInterceptor}. */
  private final OkHttpClient forOperations;
  /** Attempts of operations, each its own call: no SDK application interceptor, no call timeout. */
  private final OkHttpClient forAttempts;
  /** The same, with {@link AttemptSetupInterceptor}: for attempts whose timeouts must shrink. */
  private final OkHttpClient forShrunkAttempts;
  private final boolean attemptTimeoutSet;
  private final long deadlineNanos;
  /** The wrapped client's longest connect, read or write timeout; MAX_VALUE when one is 0. */
  private final long longestTimeoutNanos;
  private final ScheduledExecutorService userScheduler;
  /** Guarded by this for creation and shutdown; read without the lock. */
  private volatile ScheduledExecutorService defaultScheduler;
  private final ClientLifecycle lifecycle = new ClientLifecycle();

  /**
   * Makes the runtime of one client from its settings.
   *
   * @param settings what the builder was given
   * @param operations makes the operations the SDK runs on its own (polls, queries, re-sends)
   */
  public ClientRuntime(ClientSettings settings, OperationFactory operations,
      java.util.function.UnaryOperator<io.github.resilienthttp.ResumeToken> tokenBinder) {
    this.settings = settings;
    this.operations = operations;
    this.tokenBinder = tokenBinder;
    this.hedgingPolicy = settings.hedgingPolicy();
    this.resumeTokenSigner = java.util.Objects.requireNonNull(settings.resumeTokenSigner(),
        "resumeTokenSigner");
    this.wrapped = settings.wrapped();
    this.retryPolicy = settings.retryPolicy();
    this.classifier = settings.classifier();
    this.idempotencyKeyPolicy = settings.idempotencyKeyPolicy();
    this.timeSource = settings.timeSource();
    this.random = settings.random();
    this.retryBudget = settings.retryBudget();
    this.circuitBreakers = breakersOf(settings);
    this.bulkhead = settings.bulkheadConfig() == null
        ? null : new BulkheadGate(settings.bulkheadName(), settings.bulkheadConfig());
    this.overload = io.github.resilienthttp.internal.guard.TargetOverload.of(settings.overload(),
        timeSource, random);
    this.listeners = new Listeners(settings.listeners());
    this.replayHeader = settings.replayHeader();
    this.userScheduler = settings.scheduler();
    this.systemTime = timeSource instanceof SystemTimeSource;
    // What every SDK client shares: the watchdog's listener, the network tracker, and OkHttp's
    // silent retries off (RetryInterceptor restores them for pass-through calls), set once on the
    // client rather than on each call's chain.
    OkHttpClient.Builder base = withWatchdogListener(wrapped.newBuilder());
    base.retryOnConnectionFailure(false);
    // First of all (the tracker applies OriginGuard's rule before it counts): a follow-up hop to
    // another origin is refused before anything sees or sends it.
    base.networkInterceptors().add(0, new NetworkAttemptTracker());
    OkHttpClient sdkBase = base.build();
    OkHttpClient.Builder plain = sdkBase.newBuilder();
    plain.interceptors().add(0, new RetryInterceptor(this, wrapped.retryOnConnectionFailure()));
    this.forOperations = plain.build();
    // An operation's deadline replaces the wrapped client's call timeout on its attempts' calls.
    this.forAttempts = sdkBase.newBuilder().callTimeout(Duration.ZERO).build();
    OkHttpClient.Builder shrunk = forAttempts.newBuilder();
    shrunk.interceptors().add(0, new AttemptSetupInterceptor());
    this.forShrunkAttempts = shrunk.build();
    this.attemptTimeoutSet = retryPolicy.attemptTimeout().isPresent();
    this.deadlineNanos = DurationMath.toNanos(retryPolicy.deadline());
    this.longestTimeoutNanos = longestTimeoutNanos(wrapped);
  }

  /** The breakers the settings ask for: none, one for every target, or one per target. */
  private static TargetCircuitBreakers breakersOf(ClientSettings s) {
    if (s.circuitBreakerDisabled()) {
      return null;
    } else if (s.circuitBreaker() != null) {
      return TargetCircuitBreakers.single(s.circuitBreaker());
    } else if (s.sharedBreakers() != null) {
      return s.sharedBreakers();
    }
    return s.circuitBreakerRegistry() != null
        ? TargetCircuitBreakers.perTarget(s.circuitBreakerRegistry())
        : TargetCircuitBreakers.perTargetOwned(ResilientHttpClient.defaultCircuitBreakerConfig());
  }

  /** What the client's builder was given: {@code newBuilder()} reads it back. */
  public ClientSettings settings() {
    return settings;
  }

  /**
   * Whether {@code client} is an SDK client (the plain-call client of a runtime, or one derived from
   * it): wrapping it would nest two retry loops.
   */
  public static boolean isSdkClient(OkHttpClient client) {
    return client.interceptors().stream().anyMatch(i -> i instanceof RetryInterceptor)
        || client.networkInterceptors().stream().anyMatch(i -> i instanceof NetworkAttemptTracker);
  }

  /** {@return the signer of the resume tokens this client hands out and accepts} */
  /**
   * {@code token} bound to this client's signer: its text is signed with the client's key.
   *
   * @param token a token this client hands out
   * @return the bound token
   */
  public io.github.resilienthttp.ResumeToken signed(io.github.resilienthttp.ResumeToken token) {
    return tokenBinder.apply(token);
  }

  public ResumeTokenSigner resumeTokenSigner() {
    return resumeTokenSigner;
  }

  /**
   * Adds the deadline watchdog's listener and the {@link WireListener} to the wrapped client's own
   * event listener, which still sees every event. The SDK's come first, so that a listener that
   * throws cannot keep the watchdog from hearing that a call ended, nor hide that a request was
   * written. No wrapper is made for a client without a listener.
   */
  private OkHttpClient.Builder withWatchdogListener(OkHttpClient.Builder builder) {
    EventListener.Factory userListeners = wrapped.eventListenerFactory();
    EventListener sdkListeners = new WireListener(deadlineWatchdog);
    return builder.eventListenerFactory(call -> {
      EventListener user = userListeners.create(call);
      return user == EventListener.NONE ? sdkListeners : sdkListeners.plus(user);
    });
  }

  public OkHttpClient wrapped() {
    return wrapped;
  }

  public OkHttpClient forOperations() {
    return forOperations;
  }

  /** The client's retry policy's deadline, in nanoseconds (converted once). */
  long deadlineNanos() {
    return deadlineNanos;
  }

  public RetryPolicy retryPolicy() {
    return retryPolicy;
  }

  public ResponseClassifier classifier() {
    return classifier;
  }

  public IdempotencyKeyPolicy idempotencyKeyPolicy() {
    return idempotencyKeyPolicy;
  }

  public TimeSource timeSource() {
    return timeSource;
  }

  public RandomGenerator random() {
    return random;
  }

  public RetryBudget retryBudget() {
    return retryBudget;
  }

  /** The breakers, or {@code null} when breakers are off. */
  public TargetCircuitBreakers circuitBreakers() {
    return circuitBreakers;
  }

  /** The bulkhead gate, or {@code null} when there is no bulkhead. */
  public BulkheadGate bulkheadGate() {
    return bulkhead;
  }

  /** The adaptive overload state, or {@code null} when every overload option is off. */
  public io.github.resilienthttp.internal.guard.TargetOverload overload() {
    return overload;
  }

  public Listeners listeners() {
    return listeners;
  }

  public String replayHeader() {
    return replayHeader;
  }

  public DeadlineWatchdog deadlineWatchdog() {
    return deadlineWatchdog;
  }

  /** Whether the client's {@link TimeSource} is the system's: then its readings are real time. */
  public boolean systemTime() {
    return systemTime;
  }

  /** A new random idempotency key (UUID version 4). */
  public String newKey() {
    return keyGenerator.next();
  }

  /** The client's hedging policy, or {@code null} for none. */
  public HedgingPolicy hedgingPolicy() {
    return hedgingPolicy;
  }

  /** Recent attempt latencies per target, for percentile hedging delays. */
  /**
   * Says once per client, at WARN, that a hedge was not sent because OkHttp's dispatcher would
   * have queued it: hedging then needs a higher {@code maxRequestsPerHost} (or {@code maxRequests}).
   */
  void warnDispatcherQueue() {
    if (dispatcherQueueWarned.compareAndSet(false, true)) {
      org.slf4j.LoggerFactory.getLogger(HedgingDriver.class).warn("a hedge was not sent: the"
          + " wrapped client's dispatcher would have queued it (maxRequests {}, maxRequestsPerHost"
          + " {}); raise them for hedging to help (said once per client)",
          wrapped.dispatcher().getMaxRequests(), wrapped.dispatcher().getMaxRequestsPerHost());
    }
  }

  /**
   * A new operation of this client that the SDK runs on its own (a poll, a query, a re-send).
   *
   * @param request the request
   * @param firstKind how its first attempt is reported
   * @return the operation, not yet run
   */
  public io.github.resilienthttp.Operation newOperation(okhttp3.Request request,
      io.github.resilienthttp.AttemptKind firstKind) {
    return operations.create(this, request, firstKind);
  }

  public TargetLatencies latencies() {
    return latencies;
  }

  /** The user's scheduler, or {@code null} when the default one is used. */
  public ScheduledExecutorService userScheduler() {
    return userScheduler;
  }

  /**
   * The client for one attempt that is its own call. An attempt whose connect, read or write timeout
   * must shrink (to the time left, or to the attempt timeout) goes through the client with
   * {@link AttemptSetupInterceptor}; the others skip that interceptor level.
   */
  public OkHttpClient attemptClient(long remainingNanos) {
    return attemptTimeoutSet || remainingNanos < longestTimeoutNanos ? forShrunkAttempts : forAttempts;
  }

  private static long longestTimeoutNanos(OkHttpClient c) {
    int connect = c.connectTimeoutMillis();
    int read = c.readTimeoutMillis();
    int write = c.writeTimeoutMillis();
    if (connect == 0 || read == 0 || write == 0) {
      return Long.MAX_VALUE; // "no timeout" always shrinks to the time left
    }
    return TimeUnit.MILLISECONDS.toNanos(Math.max(connect, Math.max(read, write)));
  }

  /**
   * The scheduler of async waits: the user's, or a daemon thread created on first use that ends
   * after 2 s without waits, so a client that is no longer used holds no thread.
   */
  public ScheduledExecutorService scheduler() {
    if (userScheduler != null) {
      return userScheduler;
    }
    ScheduledExecutorService s = defaultScheduler;
    if (s == null) {
      synchronized (this) {
        s = defaultScheduler;
        if (s == null) {
          ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, SchedulerThread::new);
          executor.setRemoveOnCancelPolicy(true);
          // An idle client keeps no thread: the thread ends 2 s after the last scheduled wait and
          // comes back on the next one (the pool keeps one while any wait is pending).
          executor.setKeepAliveTime(2, TimeUnit.SECONDS);
          executor.allowCoreThreadTimeOut(true);
          if (lifecycle.isClosed()) {
            // Closed: no thread is started again; schedule() throws RejectedExecutionException,
            // which every caller turns into the operation's failure.
            executor.shutdown();
          }
          s = executor;
          defaultScheduler = s;
        }
      }
    }
    return s;
  }

  /** {@return whether the client is open and what runs on it} */
  public ClientLifecycle lifecycle() {
    return lifecycle;
  }

  /**
   * Closes the client (see {@code ResilientHttpClient.close()}): refuses new work, tells the running
   * work, then shuts the SDK's own scheduler down (never the user's), so that its thread ends once
   * the waits that were cancelled are gone; and, when the builder asked, releases the wrapped
   * client's dispatcher executor, connection pool and cache.
   *
   * @param now whether attempts in flight are cancelled too
   */
  public void close(boolean now) {
    if (!lifecycle.close(now)) {
      return;
    }
    if (now) {
      // Attempts in flight registered nowhere: the watchdog watches each of their calls.
      for (Execution op : deadlineWatchdog.watchedOperations()) {
        try {
          op.closeNow();
        } catch (RuntimeException e) { // NOPMD: user code (EventListener.canceled) runs; go on
          org.slf4j.LoggerFactory.getLogger(ClientRuntime.class).error(
              "closing the client: stopping {} threw; the close goes on", op, e);
        }
      }
    }
    ScheduledExecutorService s;
    synchronized (this) {
      s = defaultScheduler;
    }
    if (s != null) {
      // shutdown(), not shutdownNow(): a delayed task the wake-up did not cancel (one that was
      // already due) still runs, sees the client closed and ends its operation, rather than being
      // dropped with its future never completed.
      s.shutdown();
    }
    if (settings.closeWrappedOnClose()) {
      wrapped.dispatcher().executorService().shutdown();
      wrapped.connectionPool().evictAll();
      okhttp3.Cache cache = wrapped.cache();
      if (cache != null) {
        try {
          cache.close();
        } catch (java.io.IOException e) {
          org.slf4j.LoggerFactory.getLogger(ClientRuntime.class).warn(
              "closing the wrapped client's cache failed", e);
        }
      }
    }
  }

  /** {@return whether the calling thread is one of the SDK's default scheduler threads} */
  public static boolean onSdkScheduler() {
    return Thread.currentThread() instanceof SchedulerThread;
  }

  /** The default scheduler's thread: marked by its type, so completions can avoid it. */
  private static final class SchedulerThread extends Thread {
    SchedulerThread(Runnable r) {
      super(r, "resilient-http-scheduler");
      setDaemon(true);
    }
  }
}

package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationOptions;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.internal.deadline.DeadlineWatchdog;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.Request;

/**
 * The state of one running operation, carried as a call tag on each of its OkHttp calls (each
 * attempt's call for {@link Operation#execute()} and {@link Operation#executeAsync()}, the one call
 * of a plain call on {@link ResilientHttpClient#okHttpClient()}), where the SDK's interceptors, its
 * event listener and the {@link DeadlineWatchdog} find it. Not API. Thread-safe: counters are read
 * by the caller while interceptors write.
 */
public final class OperationContext implements Supplier<String> {
  public final ClientRuntime client;
  /** Null until needed when the key is not sent: most GETs never need one. */
  private volatile String key;
  public final boolean keySent;
  public final boolean idempotent;
  final long startNanos;
  final long deadlineNanos;
  final long deadlineDurationNanos;
  /**
   * When the deadline's backstop ({@link DeadlineWatchdog}) fires, in {@link System#nanoTime()}:
   * the backstop runs on real time, whatever the client's {@link TimeSource}.
   */
  public final long realDeadlineNanos;
  /** The call {@link DeadlineWatchdog} watches for this operation, if any. */
  public volatile Call watchedCall;
  /**
   * Set when OkHttp reported {@link #watchedCall} ended ({@code callEnd} or {@code callFailed}).
   * That happens before the operation ends when the body was complete at once (an empty body), and
   * for an async operation's earlier attempts; {@link #callDone()} tells the two apart.
   */
  public volatile boolean watchedCallEnded;
  /** Set when the operation ended without a response: no body will be read. */
  public volatile boolean endedWithoutResponse;
  /** The next operation in {@link DeadlineWatchdog}'s list; only the watchdog reads it. */
  public OperationContext watchNext;
  /**
   * Whether {@link DeadlineWatchdog} has this operation in its lists. Cleared (by the watchdog,
   * after unlinking it) when the operation is forgotten or its deadline passed.
   */
  public volatile boolean inWatchdog;
  /**
   * The type of the call tag that carries an operation, made once: OkHttp 5 keys tags by Kotlin
   * class, and its {@code Call.tag(Class)} makes a new {@code KClass} on every lookup.
   */
  public static final KClass<OperationContext> TAG =
      JvmClassMappingKt.getKotlinClass(OperationContext.class);

  /** The value of every call tag of this operation, made once rather than per call. */
  private final Function0<OperationContext> asTag = () -> this;
  private final String method;
  private final String host;
  private volatile OperationInfo info;
  /** Written and read only by the thread running the retry loop. */
  String lastReason;
  boolean lastSuccess;
  boolean lastRetryable;
  /**
   * The kind of this operation's first attempt: {@link AttemptKind#FIRST}, or {@link AttemptKind#POLL}
   * / {@link AttemptKind#QUERY} for the GETs an asynchronous operation's waiter sends. Set once,
   * before the first attempt.
   */
  public volatile AttemptKind firstAttemptKind = AttemptKind.FIRST;
  /** True for plain OkHttp calls that opted out with {@link OperationOptions#passThrough()}. */
  public final boolean passThrough;
  private volatile boolean canceled;
  private volatile CompletableFuture<Void> cancelSignal;
  /** The one OkHttp call of a plain call: cancelling it cancels the operation. */
  public volatile Call plainCall;
  private volatile boolean ended;
  /** The latest attempt: a plain call's attempts are found here (they share one OkHttp call). */
  private volatile Attempt currentAttempt;
  // Attempts may overlap (hedges): counted atomically.
  private volatile int attempts;
  private volatile int networkRequests;
  private static final VarHandle ATTEMPTS;
  private static final VarHandle NETWORK_REQUESTS;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      ATTEMPTS = lookup.findVarHandle(OperationContext.class, "attempts", int.class);
      NETWORK_REQUESTS = lookup.findVarHandle(OperationContext.class, "networkRequests", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  OperationContext(
      ClientRuntime client, String key, boolean keySent, boolean idempotent,
      String method, String host, long startNanos, long realStartNanos, long deadlineDurationNanos,
      boolean passThrough) {
    this.passThrough = passThrough;
    this.client = client;
    this.key = key;
    this.keySent = keySent;
    this.idempotent = idempotent;
    this.startNanos = startNanos;
    this.deadlineDurationNanos = deadlineDurationNanos;
    this.deadlineNanos = startNanos + deadlineDurationNanos;
    this.realDeadlineNanos = realStartNanos + deadlineDurationNanos;
    this.method = method;
    this.host = host;
  }

  /**
   * The context of a plain OkHttp call on {@code ResilientHttpClient.okHttpClient()}, with the
   * settings of its {@link OperationOptions} tag if any. A key header the caller already put on the
   * request is kept exactly as it is.
   */
  public static OperationContext forPlainCall(ClientRuntime client, Request request) {
    OperationOptions options = request.tag(OperationOptions.class);
    if (options != null && options.isPassThrough()) {
      return create(client, request, null, false, null, true);
    }
    IdempotencyKeyPolicy policy = client.idempotencyKeyPolicy();
    String header = policy.keyFromHeader(request.header(policy.headerName()));
    String callerKey = options == null ? null : options.idempotencyKey();
    if (header != null && callerKey != null && !header.equals(callerKey)) {
      throw new IllegalArgumentException("the request carries " + policy.headerName()
          + " and an OperationOptions key that differ");
    }
    String key = header != null ? IdempotencyKeyPolicy.validateKey(header) : callerKey;
    boolean keySent;
    if (header != null) {
      keySent = true;
    } else if (options != null && options.sendIdempotencyKey() != null) {
      keySent = options.sendIdempotencyKey();
    } else {
      keySent = callerKey != null || policy.sendsKeyFor(request.method());
    }
    return create(client, request, key, keySent,
        options == null ? null : options.deadline(), false);
  }

  /** The context of a new operation, for {@code Operation} and for plain OkHttp calls. */
  public static OperationContext create(ClientRuntime client, Request request, String key,
      boolean keySent, Duration deadline, boolean passThrough) {
    boolean idempotent = keySent || AttemptOutcome.isIdempotentMethod(request.method());
    Duration d = deadline != null ? deadline : client.retryPolicy().deadline();
    long now = client.timeSource().nanoTime();
    return new OperationContext(client, key, keySent, idempotent, request.method(),
        request.url().host(), now, client.systemTime() ? now : System.nanoTime(), d.toNanos(),
        passThrough);
  }

  /** The request with this operation's key header, when the operation sends one. */
  public Request stamp(Request request) {
    if (!keySent || passThrough) {
      return request;
    }
    return client.idempotencyKeyPolicy().withKey(request, key());
  }

  long remainingNanos() {
    return deadlineNanos - client.timeSource().nanoTime();
  }

  long elapsedNanos() {
    return client.timeSource().nanoTime() - startNanos;
  }

  /**
   * A new OkHttp call for one attempt of this operation: on the client that
   * {@link ClientRuntime#attemptClient} picks (which has no call timeout: the deadline replaces
   * it), tagged with the attempt, and watched for the deadline.
   */
  public Call newAttemptCall(Attempt attempt, Request request) {
    Call call = client.attemptClient(attempt.remainingNanos()).newCall(request);
    call.tag(Attempt.TAG, attempt);
    attempt.call(call);
    watchedCallEnded = false;
    watchedCall = call;
    // Checked after the call is set: a watchdog that dropped the operation (its deadline passed in
    // real time, while this attempt was being set up) either saw this call and stopped it, or is
    // told again here (watch() marks it watched), so no attempt ever runs unwatched.
    if (!inWatchdog) {
      client.deadlineWatchdog().watch(this);
    }
    return call;
  }

  /**
   * Watches the one OkHttp call of a plain call for the deadline; its attempts are the chain's
   * proceeds, so the call is the same for all of them.
   */
  public void watchPlainCall(Call call) {
    plainCall = call;
    watchedCallEnded = false;
    watchedCall = call;
    if (call.isCanceled()) {
      cancel();
    }
    if (!inWatchdog) {
      client.deadlineWatchdog().watch(this);
    }
  }

  /**
   * Whether the deadline's backstop can forget this operation: it ended, and either had no response
   * or OkHttp reported its last call ended (the body was read or closed).
   */
  public boolean callDone() {
    return endedWithoutResponse || (watchedCallEnded && ended);
  }

  /** This operation as the value of a call tag, for {@code call.tag(OperationContext.TAG, ..)}. */
  public Function0<OperationContext> asTag() {
    return asTag;
  }

  /** True once the deadline has passed in real time, i.e. the backstop may have fired. */
  boolean realDeadlinePassed() {
    return System.nanoTime() - realDeadlineNanos >= 0;
  }

  public void cancel() {
    canceled = true;
    CompletableFuture<Void> signal = cancelSignal;
    if (signal != null) {
      signal.complete(null);
    }
  }

  /**
   * Completes when the operation is cancelled: what a blocking wait (backoff, bulkhead) waits on
   * besides its own time, so that {@link #cancel()} wakes it at once. Made on first use, so an
   * operation that never waits allocates none.
   */
  CompletableFuture<Void> cancelSignal() {
    CompletableFuture<Void> signal = cancelSignal;
    if (signal == null) {
      synchronized (this) {
        signal = cancelSignal;
        if (signal == null) {
          signal = new CompletableFuture<>();
          cancelSignal = signal;
        }
      }
    }
    // Read after publishing the signal: a cancel() that saw no signal set the flag before.
    if (canceled) {
      signal.complete(null);
    }
    return signal;
  }

  public boolean isCanceled() {
    return canceled;
  }

  /** Marks the operation as ended: from now on, cancelling it changes nothing. */
  public void end() {
    ended = true;
  }

  public boolean isEnded() {
    return ended;
  }

  /**
   * Starts an attempt: counts it and makes it the current one.
   *
   * @param kind why it is sent
   * @param remainingNanos the time left before the deadline
   * @param permits the permits it holds
   * @return the attempt
   */
  public Attempt startAttempt(AttemptKind kind, long remainingNanos, AttemptPermits permits) {
    int number = (int) ATTEMPTS.getAndAdd(this, 1) + 1;
    Attempt attempt = new Attempt(this, number, kind, remainingNanos, permits);
    currentAttempt = attempt;
    return attempt;
  }

  /**
   * The operation a call belongs to: through its attempt's tag, or a plain call's own tag.
   *
   * @return the operation, or {@code null} for a call that is not the SDK's
   */
  public static OperationContext of(Call call) {
    Attempt a = call.tag(Attempt.TAG);
    return a != null ? a.op() : call.tag(TAG);
  }

  /** The latest attempt, or {@code null} before the first. */
  public Attempt currentAttempt() {
    return currentAttempt;
  }

  public int attempts() {
    return attempts;
  }

  /** Counts a request about to be written, of any of this operation's attempts. */
  void networkRequestStarted() {
    NETWORK_REQUESTS.getAndAdd(this, 1);
  }

  public int networkRequests() {
    return networkRequests;
  }

  /** The operation's key: the given one, or a new random one made on first use. */
  public String key() {
    String k = key;
    if (k == null) {
      synchronized (this) {
        k = key;
        if (k == null) {
          k = client.newKey();
          key = k;
        }
      }
    }
    return k;
  }

  /** The operation's key, for {@link AttemptOutcome#idempotencyKey()}: made on first use. */
  @Override
  public String get() {
    return key();
  }

  /** What listeners and logs see of the operation; made on first use. */
  OperationInfo info() {
    OperationInfo i = info;
    if (i == null) {
      i = new OperationInfo(key(), keySent, idempotent, method, host);
      info = i; // a benign race: equal values
    }
    return i;
  }
}

package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationOptions;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.internal.deadline.WatchEntry;
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
 * The running state of one operation: its key (made on first use), attempt and network-request
 * counters, the cancel flag and signal, whether it ended, and the deadline watchdog's links. What
 * the operation is, fixed when it starts, is its {@link #spec()} ({@link OperationSpec}); each
 * attempt's own state is its {@link Attempt}. A plain call on
 * {@code ResilientHttpClient.okHttpClient()} carries this as its call tag (its attempts share the
 * call); the attempts of {@code execute()}, {@code executeAsync()} and hedges carry their
 * {@link Attempt}, which points here. Thread-safe: counters are read by the caller while OkHttp's
 * threads write. Not API.
 */
public final class Execution extends WatchEntry<Execution>
    implements Supplier<String>, Function0<Execution> {
  private final ClientRuntime client;
  /** What the operation is: fixed when it starts. */
  private final OperationSpec spec;
  /** Null until needed when the key is not sent: most GETs never need one. */
  private volatile String key;
  /**
   * The call {@link io.github.resilienthttp.internal.deadline.DeadlineWatchdog} watches for this
   * operation, if any.
   */
  private volatile Call watchedCall;
  /**
   * Set when OkHttp reported {@link #watchedCall} ended ({@code callEnd} or {@code callFailed}).
   * That happens before the operation ends when the body was complete at once (an empty body), and
   * for an async operation's earlier attempts; {@link #callDone()} tells the two apart.
   */
  private volatile boolean watchedCallEnded;
  /** Set when the operation ended without a response: no body will be read. */
  private volatile boolean endedWithoutResponse;
  /**
   * The type of the call tag that carries an operation, made once: OkHttp 5 keys tags by Kotlin
   * class, and its {@code Call.tag(Class)} makes a new {@code KClass} on every lookup.
   */
  public static final KClass<Execution> TAG =
      JvmClassMappingKt.getKotlinClass(Execution.class);

  private volatile OperationInfo info;
  /**
   * The kind of this operation's first attempt: {@link AttemptKind#FIRST}, or
   * {@link AttemptKind#POLL} / {@link AttemptKind#QUERY} for the GETs an asynchronous operation's
   * waiter sends. Set once, before the first attempt.
   */
  private volatile AttemptKind firstAttemptKind = AttemptKind.FIRST;
  /** {@link #RUNNING}, then {@link #CANCELED} or {@link #RETURNED}, whichever comes first. */
  private volatile int outcome;
  private static final int RUNNING = 0;
  private static final int CANCELED = 1;
  private static final int RETURNED = 2;
  private volatile CompletableFuture<Void> cancelSignal;
  /** The one OkHttp call of a plain call: cancelling it cancels the operation. */
  private volatile Call plainCall;
  private volatile boolean ended;
  /** The latest attempt: a plain call's attempts are found here (they share one OkHttp call). */
  private volatile Attempt currentAttempt;
  // Attempts may overlap (hedges): counted atomically.
  private volatile int attempts;
  private volatile int networkRequests;
  private static final VarHandle ATTEMPTS;
  private static final VarHandle NETWORK_REQUESTS;
  private static final VarHandle OUTCOME;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      OUTCOME = lookup.findVarHandle(Execution.class, "outcome", int.class);
      ATTEMPTS = lookup.findVarHandle(Execution.class, "attempts", int.class);
      NETWORK_REQUESTS = lookup.findVarHandle(Execution.class, "networkRequests", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  Execution(ClientRuntime client, String key, OperationSpec spec) {
    this.client = client;
    this.key = key;
    this.spec = spec;
  }

  /**
   * The context of a plain OkHttp call on {@code ResilientHttpClient.okHttpClient()}, with the
   * settings of its {@link OperationOptions} tag if any. A key header the caller already put on the
   * request is kept exactly as it is.
   */
  public static Execution forPlainCall(ClientRuntime client, Request request) {
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
    boolean keySent = KeyDecision.keySent(header != null,
        options == null ? null : options.sendIdempotencyKey(), callerKey != null, policy,
        request.method());
    return create(client, request, key, keySent,
        options == null ? null : options.deadline(), false);
  }

  /** The context of a new operation, for {@code Operation} and for plain OkHttp calls. */
  public static Execution create(ClientRuntime client, Request request, String key,
      boolean keySent, Duration deadline, boolean passThrough) {
    return create(client, request, key, keySent, deadline, passThrough, null, null);
  }

  /**
   * The context of a new operation with its own retry policy and classifier ({@code null}: the
   * client's). The deadline, when not given, is the policy's.
   */
  public static Execution create(ClientRuntime client, Request request, String key,
      boolean keySent, Duration deadline, boolean passThrough, RetryPolicy retryPolicy,
      ResponseClassifier classifier) {
    boolean idempotent = KeyDecision.idempotent(keySent, request.method());
    RetryPolicy policy = retryPolicy != null ? retryPolicy : client.retryPolicy();
    Duration d = deadline != null ? deadline : policy.deadline();
    long now = client.timeSource().nanoTime();
    long duration = DurationMath.toNanos(d);
    long realNow = client.systemTime() ? now : System.nanoTime();
    return new Execution(client, key, new OperationSpec(request.method(),
        request.url().host(), keySent, idempotent, passThrough, now, duration, now + duration,
        realNow + duration, policy, classifier != null ? classifier : client.classifier()));
  }

  /** The request with this operation's key header, when the operation sends one. */
  public Request stamp(Request request) {
    if (!spec.keySent() || spec.passThrough()) {
      return request;
    }
    return client.idempotencyKeyPolicy().withKey(request, key());
  }

  long remainingNanos() {
    return spec.deadlineNanos() - client.timeSource().nanoTime();
  }

  long elapsedNanos() {
    return client.timeSource().nanoTime() - spec.startNanos();
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
    if (!isWatched()) {
      client.deadlineWatchdog().watch(this);
    }
    return call;
  }

  /**
   * Makes {@code call} the one the deadline's backstop watches: for a hedged operation whose winner
   * is not the latest copy, so that the deadline still bounds reading the winner's body. A loser's
   * end is then ignored (it is not the watched call).
   */
  void watchWinner(Call call) {
    watchedCall = call;
    watchedCallEnded = false;
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
    if (!isWatched()) {
      client.deadlineWatchdog().watch(this);
    }
  }

  /** The client runtime this operation runs on. */
  public ClientRuntime runtime() {
    return client;
  }

  /** What the operation is: fixed when it starts. */
  public OperationSpec spec() {
    return spec;
  }

  /** The call the deadline's backstop watches for this operation, or null. */
  public Call watchedCall() {
    return watchedCall;
  }

  /** The one OkHttp call of a plain call, or null for {@code execute()} and its siblings. */
  public Call plainCall() {
    return plainCall;
  }

  /**
   * Records that OkHttp reported {@code call} ended ({@code callEnd} or {@code callFailed}), when
   * it is the watched call; a loser's or an earlier attempt's end is ignored.
   */
  public void watchedCallEnded(Call call) {
    if (watchedCall == call) {
      watchedCallEnded = true;
    }
  }

  /** Records that the operation ended without a response: no body will be read. */
  public void endWithoutResponse() {
    endedWithoutResponse = true;
  }

  /**
   * Whether the deadline's backstop can forget this operation: it ended, and either had no response
   * or OkHttp reported its last call ended (the body was read or closed).
   */
  public boolean callDone() {
    return endedWithoutResponse || (watchedCallEnded && ended);
  }

  /**
   * This operation as the value of a call tag, for {@code call.tag(Execution.TAG, ..)}: the
   * operation itself (it is its own {@link Function0}), so that no tag value is made per operation.
   */
  public Function0<Execution> asTag() {
    return this;
  }

  /** {@return this operation}: the value of its call tags (see {@link #asTag()}). */
  @Override
  public Execution invoke() {
    return this;
  }

  /** True once the deadline has passed in real time, i.e. the backstop may have fired. */
  boolean realDeadlinePassed() {
    return System.nanoTime() - spec.realDeadlineNanos() >= 0;
  }

  /**
   * Cancels the operation, unless a response was already handed to the caller
   * ({@link #claimReturn()}): a cancel and a return race for the operation, and exactly one wins.
   *
   * @return whether the operation is cancelled (now or before); {@code false} when its response
   *     was returned, whose call must then be left alone (the caller may be reading its body)
   */
  public boolean cancel() {
    if (!OUTCOME.compareAndSet(this, RUNNING, CANCELED) && outcome != CANCELED) {
      return false;
    }
    CompletableFuture<Void> signal = cancelSignal;
    if (signal != null) {
      signal.complete(null);
    }
    return true;
  }

  /**
   * Claims the operation for returning a response, just before a driver hands it to the caller.
   *
   * @return {@code false} when a cancel came first: the driver closes the response and the
   *     operation ends as cancelled
   */
  boolean claimReturn() {
    return OUTCOME.compareAndSet(this, RUNNING, RETURNED) || outcome == RETURNED;
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
    if (outcome == CANCELED) {
      signal.complete(null);
    }
    return signal;
  }

  public boolean isCanceled() {
    return outcome == CANCELED;
  }

  /**
   * Reports the first attempt as {@code kind} ({@link AttemptKind#POLL}, {@link AttemptKind#QUERY},
   * {@link AttemptKind#RETRY} for a re-send) instead of {@link AttemptKind#FIRST}; before it
   * starts.
   */
  public void firstAttemptKind(AttemptKind kind) {
    this.firstAttemptKind = kind;
  }

  AttemptKind firstAttemptKind() {
    return firstAttemptKind;
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
  public static Execution of(Call call) {
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

  /**
   * The operation's key, for {@link io.github.resilienthttp.AttemptOutcome#idempotencyKey()}: made
   * on first use.
   */
  @Override
  public String get() {
    return key();
  }

  /** What listeners and logs see of the operation; made on first use. */
  OperationInfo info() {
    OperationInfo i = info;
    if (i == null) {
      i = new OperationInfo(key(), spec.keySent(), spec.idempotent(), spec.method(), spec.host());
      info = i; // a benign race: equal values
    }
    return i;
  }
}

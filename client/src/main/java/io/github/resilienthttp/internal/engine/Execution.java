package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.OperationInfo;
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
 * The running state of one operation: what it is ({@link OperationSpec}, fixed by
 * {@link #define}), its key (made on first use), attempt and network-request counters, the cancel
 * flag and signal, whether it ended, and the deadline watchdog's links. Each attempt's own state is
 * its {@link Attempt}. A plain call on {@code ResilientHttpClient.okHttpClient()} carries this as
 * its call tag (its attempts share the call); the attempts of {@code execute()},
 * {@code executeAsync()} and hedges carry their {@link Attempt}, which points here.
 *
 * <p>It is the base of the one engine object an operation has ({@link Failures}, then
 * {@link RetryLoop}, then {@link Run} extend it), so that a healthy call allocates one object for
 * all of them: each class keeps one idea, the operation keeps one header. Thread-safe: counters are
 * read by the caller while OkHttp's threads write; what {@link #define} sets is written once,
 * before the first attempt, and published by the attempt's start. Not API.
 */
public abstract class Execution extends WatchEntry<Execution>
    implements OperationSpec, Supplier<String>, Function0<Execution> {
  private final ClientRuntime client;
  // What the operation is (OperationSpec): written once by define(), before the first attempt.
  /** The request every attempt sends: stamped with the key once, for all of them. */
  private Request request;
  private RetryPolicy retryPolicy;
  private ResponseClassifier classifier;
  private boolean keySent;
  private boolean idempotent;
  private boolean passThrough;
  /** Whether this is a plain call's operation, whose one OkHttp call is {@link #watchedCall}. */
  private boolean plain;
  private long startNanos;
  private long deadlineNanos;
  private long realDeadlineNanos;
  /** Null until needed when the key is not sent: most GETs never need one. */
  private volatile String key;
  /**
   * The call {@link io.github.resilienthttp.internal.deadline.DeadlineWatchdog} watches for this
   * operation, if any.
   */
  private volatile Call watchedCall;
  /**
   * The watched call once OkHttp reported it ended ({@code callEnd} or {@code callFailed}): done
   * while it is still {@link #watchedCall}. That happens before the operation ends when the body
   * was complete at once (an empty body), and for an async operation's earlier attempts;
   * {@link #callDone()} tells the two apart. A reference, not a flag, so that an earlier call's end
   * that lands as the next attempt's call is set counts for nothing: no reset races it.
   */
  private volatile Call endedCall;
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
   * The kind of this operation's first attempt, as its ordinal (a byte, not a reference: the
   * object is smaller): {@link AttemptKind#FIRST}, or {@link AttemptKind#POLL} /
   * {@link AttemptKind#QUERY} for the GETs an asynchronous operation's waiter sends. Set once,
   * before the first attempt.
   */
  private byte firstAttemptKind;
  private static final AttemptKind[] KINDS = AttemptKind.values();
  /** {@link #RUNNING}, then {@link #CANCELED} or {@link #RETURNED}, whichever comes first. */
  private volatile int outcome;
  private static final int RUNNING = 0;
  private static final int CANCELED = 1;
  private static final int RETURNED = 2;
  private volatile CompletableFuture<Void> cancelSignal;
  private volatile boolean ended;
  // Attempts may overlap (hedges): counted atomically.
  private volatile int attempts;
  private volatile int networkRequests;
  private static final VarHandle ATTEMPTS;
  private static final VarHandle NETWORK_REQUESTS;
  private static final VarHandle OUTCOME;
  private static final VarHandle ENDED;
  private static final VarHandle KEY;
  private static final VarHandle WATCHED_CALL;
  private static final VarHandle ENDED_CALL;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      OUTCOME = lookup.findVarHandle(Execution.class, "outcome", int.class);
      ATTEMPTS = lookup.findVarHandle(Execution.class, "attempts", int.class);
      NETWORK_REQUESTS = lookup.findVarHandle(Execution.class, "networkRequests", int.class);
      ENDED = lookup.findVarHandle(Execution.class, "ended", boolean.class);
      KEY = lookup.findVarHandle(Execution.class, "key", String.class);
      WATCHED_CALL = lookup.findVarHandle(Execution.class, "watchedCall", Call.class);
      ENDED_CALL = lookup.findVarHandle(Execution.class, "endedCall", Call.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  Execution(ClientRuntime client) {
    this.client = client;
  }

  /**
   * Fixes what the operation is, once, before its first attempt: the request (stamped here with
   * the key when the operation sends one, so that every attempt carries the same key), the key
   * (or {@code null}: made on first use), the deadline from now ({@code null}: the policy's), and
   * the retry policy and classifier ({@code null}: the client's).
   */
  void define(Request request, String key, boolean keySent, Duration deadline,
      boolean passThrough, RetryPolicy retryPolicy, ResponseClassifier classifier) {
    RetryPolicy policy = retryPolicy != null ? retryPolicy : client.retryPolicy();
    this.retryPolicy = policy;
    this.classifier = classifier != null ? classifier : client.classifier();
    this.keySent = keySent;
    this.idempotent = KeyDecision.idempotent(keySent, request.method());
    this.passThrough = passThrough;
    if (key != null) {
      this.key = key;
    }
    long duration = deadline != null ? DurationMath.toNanos(deadline)
        : policy == client.retryPolicy() ? client.deadlineNanos()
        : DurationMath.toNanos(policy.deadline());
    startClock(client.timeSource().nanoTime(), duration);
    this.request = keySent && !passThrough
        ? client.idempotencyKeyPolicy().withKey(request, key()) : request;
  }

  /** Starts the one deadline of a run that has no attempts of its own (a resumed wait). */
  final void defineDeadline(long durationNanos) {
    startClock(client.timeSource().nanoTime(), durationNanos);
  }

  private void startClock(long now, long durationNanos) {
    this.startNanos = now;
    this.deadlineNanos = now + durationNanos;
    this.realDeadlineNanos = client.systemTime() ? deadlineNanos : System.nanoTime() + durationNanos;
  }

  /** Marks this as a plain call's operation, before its first attempt. */
  final void plain() {
    this.plain = true;
  }

  /** The request every attempt sends, stamped with the key when the operation sends one. */
  public final Request request() {
    return request;
  }

  @Override
  public final String method() {
    return request.method();
  }

  @Override
  public final String host() {
    return request.url().host();
  }

  @Override
  public final boolean keySent() {
    return keySent;
  }

  @Override
  public final boolean idempotent() {
    return idempotent;
  }

  @Override
  public final boolean passThrough() {
    return passThrough;
  }

  @Override
  public final long startNanos() {
    return startNanos;
  }

  @Override
  public final long deadlineDurationNanos() {
    return deadlineNanos - startNanos;
  }

  @Override
  public final long deadlineNanos() {
    return deadlineNanos;
  }

  @Override
  public final long realDeadlineNanos() {
    return realDeadlineNanos;
  }

  @Override
  public final RetryPolicy retryPolicy() {
    return retryPolicy;
  }

  @Override
  public final ResponseClassifier classifier() {
    return classifier;
  }

  /**
   * The time left before the deadline, in the client's {@code TimeSource}; negative once it passed.
   *
   * @return nanoseconds left
   */
  public final long remainingNanos() {
    return deadlineNanos - client.timeSource().nanoTime();
  }

  final long elapsedNanos() {
    return client.timeSource().nanoTime() - startNanos;
  }

  /**
   * A new OkHttp call for one attempt of this operation: on the client that
   * {@link ClientRuntime#attemptClient} picks (which has no call timeout: the deadline replaces
   * it), tagged with the attempt, and watched for the deadline.
   */
  public final Call newAttemptCall(Attempt attempt, Request request) {
    Call call = client.attemptClient(attempt.remainingNanos()).newCall(request);
    call.tag(Attempt.TAG, attempt);
    attempt.call(call);
    // A volatile write: checked after it, a watchdog that dropped the operation (its deadline
    // passed in real time, while this attempt was being set up) either saw this call and stopped
    // it, or is told again here (watch() marks it watched), so no attempt ever runs unwatched. The
    // blocking driver's cancel check relies on it too (Run.send): a cancel reads the watched call
    // after it cancelled the attempts, the driver reads the cancel after this write.
    watchedCall = call;
    if (!isWatched()) {
      client.deadlineWatchdog().watch(this);
    }
    return call;
  }

  /**
   * Makes {@code winner}'s call the one the deadline's backstop watches, for a hedged operation,
   * so that the deadline still bounds reading the winner's body when it is not the latest copy. A
   * loser's end is then ignored (it is not the watched call). A winner whose call already ended
   * (an empty body) keeps that end, so that the operation is forgotten once it ends.
   */
  final void watchWinner(Attempt winner) {
    Call call = winner.call();
    if (watchedCall == call) {
      return; // already the watched call: its end, if OkHttp reported it, is counted
    }
    watchedCall = call;
    // An empty body ends the call before the driver judges it: that end was reported while
    // another copy's call was the watched one. Read after the write above, as callEnded writes
    // the attempt's mark before it reads the watched call: one of the two sees the other.
    if (winner.callEndedYet()) {
      endedCall = call;
    }
  }

  /**
   * Watches the one OkHttp call of a plain call for the deadline; its attempts are the chain's
   * proceeds, so the call is the same for all of them.
   */
  public final void watchPlainCall(Call call) {
    watchedCall = call;
    if (call.isCanceled()) {
      cancel();
    }
    if (!isWatched()) {
      client.deadlineWatchdog().watch(this);
    }
  }

  /** The client runtime this operation runs on. */
  public final ClientRuntime runtime() {
    return client;
  }

  /** The call the deadline's backstop watches for this operation, or null. */
  public final Call watchedCall() {
    return watchedCall;
  }

  /** The one OkHttp call of a plain call, or null for {@code execute()} and its siblings. */
  public final Call plainCall() {
    return plain ? watchedCall : null;
  }

  /**
   * Records that OkHttp reported {@code call} ended ({@code callEnd} or {@code callFailed}), when
   * it is the watched call; a loser's or an earlier attempt's end is ignored.
   */
  public final void watchedCallEnded(Call call) {
    if (watchedCall == call) {
      // The sweep reads it without a fence of its own: a late read only delays forgetting.
      ENDED_CALL.setRelease(this, call);
      return;
    }
    // Not the watched call (an earlier attempt, a hedged copy): a hedge's winner may become the
    // watched one after its call ended (watchWinner), so its attempt keeps the end.
    Attempt a = call.tag(Attempt.TAG);
    if (a != null) {
      a.callEnded();
      if (watchedCall == call) {
        endedCall = call;
      }
    }
  }

  /**
   * The deadline watchdog forgot this operation, which is done ({@link #callDone()}: it starts no
   * attempt any more): it keeps no reference to its last call (nor, through the call's tag, to its
   * last attempt), so that a run that goes on waiting (a 202 wait) keeps none of its attempts'
   * state.
   */
  public final void forgotten() {
    WATCHED_CALL.setRelease(this, null);
    ENDED_CALL.setRelease(this, null);
  }

  /** Records that the operation ended without a response: no body will be read. */
  public final void endWithoutResponse() {
    endedWithoutResponse = true;
  }

  /**
   * Whether the operation ended, with a response or without: it starts no attempt any more. Once
   * true, never false again (unlike {@link #callDone()}, which a {@link #forgotten()} clears).
   *
   * @return whether the operation ended
   */
  public final boolean hasEnded() {
    return ended || endedWithoutResponse;
  }

  /**
   * Whether the deadline's backstop can forget this operation: it ended, and either had no response
   * or OkHttp reported its last call ended (the body was read or closed).
   */
  public final boolean callDone() {
    Call last = endedCall;
    return endedWithoutResponse || (last != null && last == watchedCall && ended);
  }

  /**
   * The client closes now ({@code closeNow()}): the operation stops, as {@link Run#clientClosing}
   * says. The deadline watchdog knows every operation with an attempt in flight, so the close
   * reaches them through it, and no operation registers with the client's lifecycle on its way.
   */
  public abstract void closeNow();

  /**
   * This operation as the value of a call tag, for {@code call.tag(Execution.TAG, ..)}: the
   * operation itself (it is its own {@link Function0}), so that no tag value is made per operation.
   */
  public final Function0<Execution> asTag() {
    return this;
  }

  /** {@return this operation}: the value of its call tags (see {@link #asTag()}). */
  @Override
  public final Execution invoke() {
    return this;
  }

  /** True once the deadline has passed in real time, i.e. the backstop may have fired. */
  final boolean realDeadlinePassed() {
    return System.nanoTime() - realDeadlineNanos >= 0;
  }

  /**
   * Cancels the operation, unless a response was already handed to the caller
   * ({@link #claimReturn()}): a cancel and a return race for the operation, and exactly one wins.
   *
   * @return whether the operation is cancelled (now or before); {@code false} when its response
   *     was returned, whose call must then be left alone (the caller may be reading its body)
   */
  public final boolean cancel() {
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
  final boolean claimReturn() {
    return OUTCOME.compareAndSet(this, RUNNING, RETURNED) || outcome == RETURNED;
  }

  /**
   * Completes when the operation is cancelled: what a blocking wait (backoff, bulkhead) waits on
   * besides its own time, so that {@link #cancel()} wakes it at once. Made on first use, so an
   * operation that never waits allocates none.
   */
  final CompletableFuture<Void> cancelSignal() {
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

  public final boolean isCanceled() {
    return outcome == CANCELED;
  }

  /**
   * Reports the first attempt as {@code kind} ({@link AttemptKind#POLL}, {@link AttemptKind#QUERY},
   * {@link AttemptKind#RETRY} for a re-send) instead of {@link AttemptKind#FIRST}; before it
   * starts.
   */
  public final void firstAttemptKind(AttemptKind kind) {
    this.firstAttemptKind = (byte) kind.ordinal();
  }

  final AttemptKind firstAttemptKind() {
    return KINDS[firstAttemptKind];
  }

  /** Marks the operation as ended: from now on, cancelling it changes nothing. */
  public final void end() {
    ENDED.setRelease(this, true); // the watchdog reads it; a late read only delays forgetting
  }

  public final boolean isEnded() {
    return ended;
  }

  /**
   * Starts an attempt: numbers and counts it and makes it the current one.
   *
   * @param attempt the attempt, with its permits taken
   * @param kind why it is sent
   * @param startNanos when it starts, in the client's {@code TimeSource}
   * @return the attempt
   */
  public final Attempt countAttempt(Attempt attempt, AttemptKind kind, long startNanos) {
    // Counted without an atomic add: attempts start one at a time (a sequential driver's steps
    // follow each other; the hedging driver starts its copies under its lock).
    int number = attempts + 1;
    ATTEMPTS.setRelease(this, number);
    attempt.start(number, kind, startNanos);
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

  /**
   * The attempt started last, or {@code null} before the first: a plain call's attempts are found
   * here (they share one OkHttp call, and its interceptors and events run on the thread that
   * drives them).
   */
  public abstract Attempt currentAttempt();

  public final int attempts() {
    return attempts;
  }

  /** Counts a request about to be written, of any of this operation's attempts. */
  final void networkRequestStarted() {
    NETWORK_REQUESTS.getAndAdd(this, 1);
  }

  public final int networkRequests() {
    return networkRequests;
  }

  /** The operation's key: the given one, or a new random one made on first use (once). */
  public final String key() {
    String k = key;
    if (k == null) {
      k = client.newKey();
      if (!KEY.compareAndSet(this, null, k)) {
        k = key; // another thread made it first
      }
    }
    return k;
  }

  /** {@return the key if it was given or made, else {@code null}} (for {@code toString}) */
  public final String keyIfMade() {
    return key;
  }

  /**
   * The operation's key, for {@link io.github.resilienthttp.AttemptOutcome#idempotencyKey()}: made
   * on first use.
   */
  @Override
  public final String get() {
    return key();
  }

  /** What listeners and logs see of the operation; made on first use. */
  final OperationInfo info() {
    OperationInfo i = info;
    if (i == null) {
      i = new OperationInfo(key(), keySent, idempotent, method(), host());
      info = i; // a benign race: equal values
    }
    return i;
  }
}

package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.internal.guard.BulkheadGate;
import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;

/**
 * The state of one attempt of an operation: its number and kind, when it started, its permits (it
 * is its own {@link AttemptPermits}), its OkHttp call, and what reached the wire. An attempt that is its own OkHttp call
 * ({@code execute()}, {@code executeAsync()}, hedges) carries it as a call tag, where the SDK's
 * interceptors and event listener find it; a plain call's attempts share that call, so they are
 * found through the operation's {@link Execution#currentAttempt()}.
 *
 * <p>Each field has one writer: the driver writes the setup before the call starts; OkHttp's thread
 * for the call writes the network facts; the driver reads them after the call. Hedged attempts of
 * one operation each have their own. Not API.
 */
public final class Attempt extends AttemptPermits implements Function0<Attempt> {
  /**
   * The type of the call tag, made once: OkHttp 5 keys tags by Kotlin class, and its
   * {@code Call.tag(Class)} makes a new {@code KClass} on every lookup.
   */
  public static final KClass<Attempt> TAG = JvmClassMappingKt.getKotlinClass(Attempt.class);
  private static final VarHandle NETWORK_REQUESTS;
  private static final VarHandle CALL;
  private static final VarHandle SENT;
  private static final VarHandle BODY_STARTED;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      NETWORK_REQUESTS = lookup.findVarHandle(Attempt.class, "networkRequests", int.class);
      CALL = lookup.findVarHandle(Attempt.class, "call", Call.class);
      SENT = lookup.findVarHandle(Attempt.class, "sent", boolean.class);
      BODY_STARTED = lookup.findVarHandle(Attempt.class, "bodyStarted", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final RetryLoop op;
  // Set by start(), before the attempt's call is made: published to OkHttp's threads with the call.
  private int number;
  private AttemptKind kind;
  private long startNanos;
  /** Requests of this attempt that reached the SDK's network interceptor (a connection in hand). */
  private volatile int networkRequests;
  /** Request headers of this attempt started going to the wire (OkHttp's requestHeadersStart). */
  private volatile boolean sent;
  /** A request body of this attempt started being written (OkHttp's requestBodyStart). */
  private volatile boolean bodyStarted;
  /**
   * The attempt failed between the SDK's network interceptor and the wire, before anything was
   * written: in a user network interceptor (e.g. request signing), not in the network.
   */
  private volatile boolean failedBeforeWire;
  private volatile Call call;
  /** OkHttp reported this attempt's call ended while it was not its operation's watched call. */
  private volatile boolean callEnded;
  /** Run once, when the first request of this attempt reaches the SDK's network interceptor. */
  private volatile Runnable onWire;

  /** An attempt of {@code op} whose permits are being taken: {@link #start} numbers it. */
  public Attempt(RetryLoop op) {
    this.op = op;
  }

  /** Numbers the attempt and starts its clock, once its permits are held. */
  void start(int number, AttemptKind kind, long startNanos) {
    this.number = number;
    this.kind = kind;
    this.startNanos = startNanos;
  }

  /**
   * The attempt a call belongs to: its own tag, or for a plain call, its operation's current one.
   *
   * @return the attempt, or {@code null} for a call that is not the SDK's (a pass-through call, or
   *     a plain call before its first attempt)
   */
  public static Attempt of(Call call) {
    Attempt a = call.tag(TAG);
    if (a != null) {
      return a;
    }
    Execution op = call.tag(Execution.TAG);
    return op == null ? null : op.currentAttempt();
  }

  /** This attempt as the value of its call's tag (no allocation: it is its own function). */
  @Override
  public Attempt invoke() {
    return this;
  }

  public Execution op() {
    return op;
  }

  public int number() {
    return number;
  }

  public AttemptKind kind() {
    return kind;
  }

  /** The time left before the deadline when this attempt started: caps its timeouts. */
  public long remainingNanos() {
    return op.deadlineNanos() - startNanos;
  }

  /** When this attempt started, in the client's {@code TimeSource}. */
  @Override
  long startNanos() {
    return startNanos;
  }

  AttemptPermits permits() {
    return this;
  }

  @Override
  TargetCircuitBreakers.Target target() {
    return op.target();
  }

  @Override
  BulkheadGate bulkhead() {
    return op.runtime().bulkheadGate();
  }

  @Override
  TimeSource clock() {
    return op.runtime().timeSource();
  }

  /**
   * The attempt's time before its deadline, when the deadline watchdog stops its call then: the
   * operation's watched call is this attempt's and the clock is the real one, which the watchdog
   * runs on. Its answer is recorded only after the driver saw the call not cancelled (the retry
   * loop's judge), so it came before the watchdog's sweep that would have cancelled it (at most
   * {@code DeadlineWatchdog.TICK_NANOS} after the deadline, unless Okio's watchdog thread is held
   * up). A plain call's attempts (no call of their own), hedged copies that are not the watched
   * call, and a fake clock get {@link Long#MAX_VALUE}: their duration is always measured.
   *
   * @return the attempt's time before its deadline in nanoseconds, or {@link Long#MAX_VALUE}
   */
  @Override
  public long longestNanos() {
    Call c = call;
    return c != null && op.runtime().systemTime() && op.watchedCall() == c
        ? remainingNanos() : Long.MAX_VALUE;
  }

  /** This attempt's OkHttp call, once made; a plain call's attempts have none of their own. */
  public Call call() {
    return call;
  }

  void call(Call c) {
    CALL.setRelease(this, c); // published with the call itself; readers read it volatile
  }

  /**
   * A request of this attempt reached the SDK's network interceptor (OkHttp's thread for the call):
   * counted as a network request. Nothing is written yet: user network interceptors run next, and
   * only {@link #requestSent()} means the server may have seen it.
   */
  public void networkRequestStarted() {
    // One writer: the thread that runs this attempt's call (its requests follow one another).
    int before = networkRequests;
    NETWORK_REQUESTS.setRelease(this, before + 1);
    op.networkRequestStarted();
    Runnable r = onWire;
    if (before == 0 && r != null) {
      r.run();
    }
  }

  /**
   * Runs {@code r} when this attempt is on the wire: OkHttp's dispatcher ran its call and a
   * connection is in hand (the first request reached the SDK's network interceptor). Set before the
   * call starts.
   */
  void onWire(Runnable r) {
    this.onWire = r;
  }

  /** Whether this attempt's call got as far as the network (see {@link #onWire}). */
  boolean onWireYet() {
    return networkRequests > 0;
  }

  /**
   * OkHttp starts writing a request of this attempt ({@code EventListener.requestHeadersStart}):
   * from now on the attempt may have reached the server.
   */
  public void requestSent() {
    SENT.setRelease(this, true); // one writer (the call's thread); readers read it volatile
  }

  /** OkHttp starts writing a request body of this attempt ({@code requestBodyStart}). */
  public void requestBodyStarted() {
    BODY_STARTED.setRelease(this, true); // as requestSent()
  }

  /** OkHttp reported this attempt's call ended ({@link Execution#watchedCallEnded}). */
  void callEnded() {
    callEnded = true; // volatile: ordered before the watched call is read again
  }

  /** Whether OkHttp reported this attempt's call ended (see {@link #callEnded()}). */
  boolean callEndedYet() {
    return callEnded;
  }

  /** The attempt failed after the SDK's network interceptor and before anything was written. */
  public void failedBeforeWire() {
    failedBeforeWire = true;
  }

  /**
   * Whether OkHttp started writing a request of this attempt: it may have reached the server.
   * Before that (connect, TLS, a user network interceptor that throws) it certainly did not.
   */
  public boolean mayHaveReachedServer() {
    return sent;
  }

  /**
   * Whether a request body of this attempt started being written: a one-shot body cannot be sent
   * again after that, even when the server did not process it.
   */
  public boolean bodyWriteStarted() {
    return bodyStarted;
  }

  /**
   * Whether the attempt failed in the client's own code before anything was written, with a
   * connection in hand (a user network interceptor): not a sign of the server's health.
   */
  public boolean failedInClientBeforeWire() {
    return failedBeforeWire && !sent;
  }

  /** Requests of this attempt that reached the SDK's network interceptor. */
  public int networkRequests() {
    return networkRequests;
  }

  @Override
  public String toString() {
    return "Attempt{" + number + ", " + kind + "}";
  }
}

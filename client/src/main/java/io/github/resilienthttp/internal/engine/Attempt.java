package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;

/**
 * The state of one attempt of an operation: its number and kind, the time left when it started,
 * its permits, its OkHttp call, and what reached the wire. An attempt that is its own OkHttp call
 * ({@code execute()}, {@code executeAsync()}, hedges) carries it as a call tag, where the SDK's
 * interceptors and event listener find it; a plain call's attempts share that call, so they are
 * found through the operation's {@link OperationContext#currentAttempt()}.
 *
 * <p>Each field has one writer: the driver writes the setup before the call starts; OkHttp's thread
 * for the call writes the network facts; the driver reads them after the call. Hedged attempts of
 * one operation each have their own. Not API.
 */
public final class Attempt implements Function0<Attempt> {
  /**
   * The type of the call tag, made once: OkHttp 5 keys tags by Kotlin class, and its
   * {@code Call.tag(Class)} makes a new {@code KClass} on every lookup.
   */
  public static final KClass<Attempt> TAG = JvmClassMappingKt.getKotlinClass(Attempt.class);
  private static final VarHandle NETWORK_REQUESTS;

  static {
    try {
      NETWORK_REQUESTS = MethodHandles.lookup()
          .findVarHandle(Attempt.class, "networkRequests", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final OperationContext op;
  private final int number;
  private final AttemptKind kind;
  private final long remainingNanos;
  private final AttemptPermits permits;
  /** Requests of this attempt whose bytes started going to the network. */
  private volatile int networkRequests;
  private volatile Call call;

  Attempt(OperationContext op, int number, AttemptKind kind, long remainingNanos,
      AttemptPermits permits) {
    this.op = op;
    this.number = number;
    this.kind = kind;
    this.remainingNanos = remainingNanos;
    this.permits = permits;
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
    OperationContext op = call.tag(OperationContext.TAG);
    return op == null ? null : op.currentAttempt();
  }

  /** This attempt as the value of its call's tag (no allocation: it is its own function). */
  @Override
  public Attempt invoke() {
    return this;
  }

  public OperationContext op() {
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
    return remainingNanos;
  }

  AttemptPermits permits() {
    return permits;
  }

  /** This attempt's OkHttp call, once made; a plain call's attempts have none of their own. */
  public Call call() {
    return call;
  }

  void call(Call c) {
    this.call = c;
  }

  /**
   * A request of this attempt is about to be written to the network (OkHttp's thread for the
   * call): from now on the attempt may have reached the server.
   */
  public void networkRequestStarted() {
    NETWORK_REQUESTS.getAndAdd(this, 1);
    op.networkRequestStarted();
  }

  /** Whether a request of this attempt was about to be written: it may have reached the server. */
  public boolean mayHaveReachedServer() {
    return networkRequests > 0;
  }

  @Override
  public String toString() {
    return "Attempt{" + number + ", " + kind + "}";
  }
}

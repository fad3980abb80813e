package io.github.resilienthttp;

import io.github.resilienthttp.internal.engine.Attempt;
import io.github.resilienthttp.internal.engine.Execution;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import okhttp3.Call;

/**
 * Tells an interceptor on the wrapped {@link okhttp3.OkHttpClient} which operation and attempt the
 * call it runs in belongs to: for tracing, logging or metrics that must agree with what
 * {@link OperationListener}s see. Every attempt of an {@link Operation} is its own OkHttp call, and
 * every attempt of a plain call on {@link ResilientHttpClient#okHttpClient()} runs within that one
 * call's chain; both are recognized.
 *
 * <p>Static and thread-safe. Calls that are not the SDK's (made on another client) answer empty.
 */
public final class OperationCalls {
  private OperationCalls() {}

  /**
   * The idempotency key of the operation that {@code call} belongs to: the same value as
   * {@link OperationInfo#idempotencyKey()} in the listener callbacks of that operation, so a listener
   * and an interceptor can meet on it.
   *
   * @param call the call an interceptor runs in ({@code chain.call()})
   * @return the operation's whole key (not for logs, see {@link OperationInfo}), or empty when the
   *     call is not an SDK call
   * @throws NullPointerException when {@code call} is null
   */
  public static Optional<String> idempotencyKey(Call call) {
    Execution op = Execution.of(Objects.requireNonNull(call, "call"));
    return op == null ? Optional.empty() : Optional.of(op.get());
  }

  /**
   * The number of the attempt that {@code call} is running now: 1 for the first, the same number as
   * {@link OperationListener#attemptStarted(OperationInfo, int, AttemptKind)} reported for it. The
   * copies of a hedged operation overlap: each copy's call answers with its own number.
   *
   * @param call the call an interceptor runs in ({@code chain.call()})
   * @return the attempt's number, from 1, or empty when the call is not an SDK call or no attempt
   *     started yet
   * @throws NullPointerException when {@code call} is null
   */
  public static OptionalInt attempt(Call call) {
    Attempt a = Attempt.of(Objects.requireNonNull(call, "call"));
    return a == null ? OptionalInt.empty() : OptionalInt.of(a.number());
  }

  /**
   * The kind of the attempt that {@code call} is running now: first, retry or hedge.
   *
   * @param call the call an interceptor runs in ({@code chain.call()})
   * @return the attempt's kind, or empty when the call is not an SDK call or no attempt started yet
   * @throws NullPointerException when {@code call} is null
   */
  public static Optional<AttemptKind> kind(Call call) {
    Attempt a = Attempt.of(Objects.requireNonNull(call, "call"));
    return a == null ? Optional.empty() : Optional.of(a.kind());
  }
}

package io.github.resilienthttp.internal.guard;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import io.github.resilienthttp.ConcurrencyLimitPolicy;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * {@link AdaptiveLimiter} over Netflix concurrency-limits' {@code SimpleLimiter} (non-blocking: at
 * the limit, {@code acquire} answers empty) with a {@code VegasLimit} or a {@code Gradient2Limit}.
 * The only class that names Netflix's types: the dependency is optional, so nothing else may load
 * them (nor this class: loading it needs them; {@link TargetOverload#netflixAvailable()} checks
 * first). Vegas has no floor of its own: {@link Floored} keeps its limit at the policy's minimum.
 * Thread-safe (Netflix's limiter is). Not API.
 */
final class NetflixLimiter implements AdaptiveLimiter {
  private final SimpleLimiter<Void> limiter;

  NetflixLimiter(ConcurrencyLimitPolicy policy, LongSupplier nanoClock) {
    Limit limit = switch (policy.algorithm()) {
      case VEGAS -> new Floored(VegasLimit.newBuilder()
          .initialLimit(policy.initialLimit())
          .maxConcurrency(policy.maxLimit())
          .build(), policy.minLimit());
      case GRADIENT -> Gradient2Limit.newBuilder()
          .initialLimit(policy.initialLimit())
          .minLimit(policy.minLimit())
          .maxConcurrency(policy.maxLimit())
          .build();
    };
    this.limiter = SimpleLimiter.newBuilder().limit(limit).nanoClock(nanoClock).build();
  }

  @Override
  public Permit tryAcquire() {
    Optional<Limiter.Listener> listener = limiter.acquire(null);
    return listener.map(NetflixLimiter::permit).orElse(null);
  }

  @Override
  public int limit() {
    return limiter.getLimit();
  }

  private static Permit permit(Limiter.Listener l) {
    return new Permit() {
      @Override
      public void success() {
        l.onSuccess();
      }

      @Override
      public void dropped() {
        l.onDropped();
      }

      @Override
      public void ignored() {
        l.onIgnore();
      }
    };
  }

  /** A limit kept at or above {@code min}. */
  private static final class Floored implements Limit {
    private final Limit inner;
    private final int min;

    Floored(Limit inner, int min) {
      this.inner = inner;
      this.min = min;
    }

    @Override
    public int getLimit() {
      return Math.max(min, inner.getLimit());
    }

    @Override
    public void notifyOnChange(Consumer<Integer> consumer) {
      inner.notifyOnChange(l -> consumer.accept(Math.max(min, l)));
    }

    @Override
    public void onSample(long startTime, long rtt, int inflight, boolean didDrop) {
      inner.onSample(startTime, rtt, inflight, didDrop);
    }
  }
}

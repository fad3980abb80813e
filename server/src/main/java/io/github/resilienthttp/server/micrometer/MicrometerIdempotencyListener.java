package io.github.resilienthttp.server.micrometer;

import io.github.resilienthttp.server.IdempotencyListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Counts what the guard did in one Micrometer counter, {@code resilienthttp.server.idempotency}, tagged
 * {@code outcome} = {@code claimed}, {@code claim_expired}, {@code replayed}, {@code in_progress},
 * {@code mismatch}, {@code expired_key_refused}, {@code lease_lost} or {@code rejected}. Needs
 * {@code io.micrometer:micrometer-core} (an optional dependency of this module). Thread-safe.
 */
public final class MicrometerIdempotencyListener implements IdempotencyListener {
  /** The counter's name. */
  public static final String METER = "resilienthttp.server.idempotency";

  private final Counter claimed;
  private final Counter claimExpired;
  private final Counter replayed;
  private final Counter inProgress;
  private final Counter mismatch;
  private final Counter expiredKeyRefused;
  private final Counter leaseLost;
  private final Counter rejected;

  /**
   * Registers the counters.
   *
   * @param registry where
   */
  public MicrometerIdempotencyListener(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    claimed = counter(registry, "claimed");
    claimExpired = counter(registry, "claim_expired");
    replayed = counter(registry, "replayed");
    inProgress = counter(registry, "in_progress");
    mismatch = counter(registry, "mismatch");
    expiredKeyRefused = counter(registry, "expired_key_refused");
    leaseLost = counter(registry, "lease_lost");
    rejected = counter(registry, "rejected");
  }

  private static Counter counter(MeterRegistry registry, String outcome) {
    return Counter.builder(METER).tag("outcome", outcome)
        .description("Idempotency-Key requests by what the guard did").register(registry);
  }

  @Override
  public void claimed(String key, int attempt) {
    claimed.increment();
  }

  @Override
  public void claimExpired(String key, int attempt) {
    claimExpired.increment();
  }

  @Override
  public void replayed(String key, int status) {
    replayed.increment();
  }

  @Override
  public void inProgress(String key) {
    inProgress.increment();
  }

  @Override
  public void mismatch(String key) {
    mismatch.increment();
  }

  @Override
  public void expiredKeyRefused(String key) {
    expiredKeyRefused.increment();
  }

  @Override
  public void leaseLost(String key) {
    leaseLost.increment();
  }

  @Override
  public void rejected(String reason) {
    rejected.increment();
  }
}

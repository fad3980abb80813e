package io.github.resilienthttp.testkit;

import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutboxClaim;
import io.github.resilienthttp.OutboxEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An {@link Outbox} that passes every call to another one, except that it can kill the resumer at a
 * {@link ResumerCrashPoint}: the armed stage's next call throws {@link ProcessCrash} before reaching
 * the outbox (a crash fires once, then the point is disarmed). The outbox behind it keeps what was
 * written, as a database outlives the process. Thread-safe.
 */
public final class CrashingOutbox implements Outbox {
  /** The resumer process died here (an {@link Error}: nothing in the SDK catches it). */
  public static final class ProcessCrash extends Error {
    private static final long serialVersionUID = 1L;

    ProcessCrash(ResumerCrashPoint point) {
      super("the resumer process died " + point);
    }
  }

  private final Outbox durable;
  private final AtomicReference<ResumerCrashPoint> armed = new AtomicReference<>();

  /**
   * Wraps {@code durable}.
   *
   * @param durable the outbox that survives the crash
   */
  public CrashingOutbox(Outbox durable) {
    this.durable = Objects.requireNonNull(durable, "durable");
  }

  /**
   * Arms one crash.
   *
   * @param point where the resumer dies next
   * @return this
   */
  public CrashingOutbox crashAt(ResumerCrashPoint point) {
    armed.set(Objects.requireNonNull(point, "point"));
    return this;
  }

  private void crashIfArmed(ResumerCrashPoint point) {
    if (armed.compareAndSet(point, null)) {
      throw new ProcessCrash(point);
    }
  }

  @Override
  public void park(OutboxEntry entry) {
    durable.park(entry);
  }

  @Override
  public List<OutboxEntry> due(Instant now, int max) {
    return durable.due(now, max);
  }

  @Override
  public void remove(String idempotencyKey) {
    durable.remove(idempotencyKey);
  }

  @Override
  public int size() {
    return durable.size();
  }

  @Override
  public List<OutboxClaim> claim(Instant now, int max, Duration lease) {
    return durable.claim(now, max, lease);
  }

  @Override
  public boolean renew(OutboxClaim claim, Instant now, Duration lease) {
    crashIfArmed(ResumerCrashPoint.AFTER_RESUME_BEFORE_RESULT);
    return durable.renew(claim, now, lease);
  }

  @Override
  public boolean complete(OutboxClaim claim) {
    crashIfArmed(ResumerCrashPoint.AFTER_RESULT_BEFORE_REMOVE);
    return durable.complete(claim);
  }

  @Override
  public boolean reschedule(OutboxClaim claim, OutboxEntry next) {
    return durable.reschedule(claim, next);
  }

  @Override
  public Optional<Instant> oldestParkedAt() {
    return durable.oldestParkedAt();
  }

  @Override
  public String toString() {
    return "CrashingOutbox{" + durable + "}";
  }
}

package io.github.resilienthttp.callbacks;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link Deduplicator} did with one event or message.
 *
 * <ul>
 *   <li>{@link Processed}: this call ran the work and recorded it done.
 *   <li>{@link Duplicate}: done before; the work did not run. Acknowledge the delivery.
 *   <li>{@link Busy}: another consumer holds the lease; the work did not run. Ask for redelivery later.
 *   <li>{@link Failed}: the work threw, or its completion lost the lease; the transaction (if any) was
 *       rolled back and the record released, so a redelivery processes it again.
 * </ul>
 */
public sealed interface ProcessingOutcome
    permits ProcessingOutcome.Processed, ProcessingOutcome.Duplicate, ProcessingOutcome.Busy,
        ProcessingOutcome.Failed {

  /**
   * This call did the work and recorded it.
   *
   * @param result what the work returned and the record now holds, may be {@code null}
   * @param attempt the claim's attempt number (greater than 1 after a crash or failure)
   */
  record Processed(String result, int attempt) implements ProcessingOutcome {
    /** {@return the result, empty when null} */
    public Optional<String> storedResult() {
      return Optional.ofNullable(result);
    }
  }

  /**
   * Already done; the work did not run.
   *
   * @param result the result stored by the consumer that did the work, may be {@code null}
   * @param completedAt when that consumer completed it
   */
  record Duplicate(String result, Instant completedAt) implements ProcessingOutcome {
    /** {@return the result, empty when null} */
    public Optional<String> storedResult() {
      return Optional.ofNullable(result);
    }
  }

  /**
   * Another consumer holds the lease until {@code leaseExpiresAt}.
   *
   * @param leaseExpiresAt when the other consumer's lease expires
   */
  record Busy(Instant leaseExpiresAt) implements ProcessingOutcome {}

  /**
   * The work threw, or completing it lost the lease ({@link LeaseLostException}).
   *
   * @param cause what failed
   */
  record Failed(Exception cause) implements ProcessingOutcome {
    /**
     * Validates.
     *
     * @param cause what failed
     */
    public Failed {
      Objects.requireNonNull(cause, "cause");
    }

    /** {@return true when the work ran but another consumer had taken the record over} */
    public boolean leaseLost() {
      return cause instanceof LeaseLostException;
    }
  }
}

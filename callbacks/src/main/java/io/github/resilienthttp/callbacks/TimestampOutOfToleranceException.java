package io.github.resilienthttp.callbacks;

import java.time.Duration;
import java.time.Instant;

/**
 * The signature is valid but the signed timestamp is further from the receiver's clock than the
 * tolerance allows: in the past, a replay of an old delivery (or a sender retrying without signing
 * again); in the future, a skewed clock. Checked after the signature, so this exception always means
 * an authentic delivery.
 */
public final class TimestampOutOfToleranceException extends CallbackVerificationException {
  private static final long serialVersionUID = 1L;

  /** The signed timestamp. */
  private final Instant timestamp;
  /** The receiver's clock. */
  private final Instant now;
  /** The exceeded tolerance. */
  private final Duration tolerance;

  TimestampOutOfToleranceException(String scheme, Instant timestamp, Instant now, Duration tolerance) {
    super(scheme, "timestamp " + timestamp + " is " + (timestamp.isAfter(now) ? "ahead of" : "behind")
        + " the receiver's clock " + now + " by " + Duration.between(timestamp, now).abs()
        + ", more than the tolerance " + tolerance);
    this.timestamp = timestamp;
    this.now = now;
    this.tolerance = tolerance;
  }

  /** {@return the signed timestamp} */
  public Instant timestamp() {
    return timestamp;
  }

  /** {@return the receiver's clock at verification} */
  public Instant now() {
    return now;
  }

  /** {@return the tolerance that was exceeded} */
  public Duration tolerance() {
    return tolerance;
  }

  /** {@return true when the timestamp is in the future, false when stale} */
  public boolean isFuture() {
    return timestamp.isAfter(now);
  }
}

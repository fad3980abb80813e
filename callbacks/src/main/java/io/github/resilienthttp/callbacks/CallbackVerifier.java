package io.github.resilienthttp.callbacks;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;

/**
 * Verifies deliveries: the scheme's signature first, then the signed timestamp against the clock.
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>range</th></tr>
 * <tr><td>{@link Builder#scheme(SignatureScheme) scheme}</td><td>required</td><td>any</td></tr>
 * <tr><td>{@link Builder#tolerance(Duration) tolerance}: how far the signed timestamp may be from the
 *     clock, in the past and in the future</td><td>5 min (what Stripe's and the Standard Webhooks
 *     libraries use)</td><td>1 s..24 h</td></tr>
 * <tr><td>{@link Builder#clock(InstantSource) clock}</td><td>{@link Clock#systemUTC()}</td>
 *     <td>any</td></tr>
 * </table>
 *
 * <p>The signature is checked first so that {@link TimestampOutOfToleranceException} always means an
 * authentic but old (or early) delivery, and a forgery is always a {@link SignatureMismatchException}.
 * A timestamp exactly {@code tolerance} away is accepted.
 *
 * <p>Immutable and thread-safe.
 */
public final class CallbackVerifier {
  static final Duration MAX_TOLERANCE = Duration.ofHours(24);

  private final SignatureScheme scheme;
  private final Duration tolerance;
  private final InstantSource clock;

  private CallbackVerifier(Builder b) {
    this.scheme = b.scheme;
    this.tolerance = b.tolerance;
    this.clock = b.clock;
  }

  /** {@return a builder with the defaults above} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Verifies one delivery.
   *
   * @param headers the delivery's headers
   * @param body the raw body bytes, exactly as received
   * @return what was verified
   * @throws MalformedCallbackException when a signature header is missing or malformed
   * @throws SignatureMismatchException when no signature matches
   * @throws TimestampOutOfToleranceException when authentic but outside the tolerance
   */
  public VerifiedCallback verify(CallbackHeaders headers, byte[] body)
      throws CallbackVerificationException {
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(body, "body");
    VerifiedCallback verified = scheme.authenticate(headers, body);
    Instant now = clock.instant();
    Instant ts = verified.timestamp();
    if (ts.isBefore(now.minus(tolerance)) || ts.isAfter(now.plus(tolerance))) {
      throw new TimestampOutOfToleranceException(scheme.name(), ts, now, tolerance);
    }
    return verified;
  }

  /** {@return the scheme} */
  public SignatureScheme scheme() {
    return scheme;
  }

  /** {@return the timestamp tolerance, in both directions} */
  public Duration tolerance() {
    return tolerance;
  }

  /** {@return the clock} */
  public InstantSource clock() {
    return clock;
  }

  @Override
  public String toString() {
    return "CallbackVerifier{scheme=" + scheme + ", tolerance=" + tolerance + "}";
  }

  /** Builds a {@link CallbackVerifier}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private SignatureScheme scheme;
    private Duration tolerance = Duration.ofMinutes(5);
    private InstantSource clock = Clock.systemUTC();

    private Builder() {}

    /**
     * Required.
     *
     * @param scheme how the sender signs
     * @return this builder
     */
    public Builder scheme(SignatureScheme scheme) {
      this.scheme = Objects.requireNonNull(scheme, "scheme");
      return this;
    }

    /**
     * How far the signed timestamp may be from the clock, either way: 1 s to 24 h. Default 5 min.
     *
     * @param tolerance the tolerance
     * @return this builder
     */
    public Builder tolerance(Duration tolerance) {
      this.tolerance = Objects.requireNonNull(tolerance, "tolerance");
      return this;
    }

    /**
     * The clock timestamps are compared with. Default {@link Clock#systemUTC()}.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the verifier.
     *
     * @return the verifier
     * @throws IllegalStateException when no scheme was set
     * @throws IllegalArgumentException naming the field and value when the tolerance is out of range
     */
    public CallbackVerifier build() {
      if (scheme == null) throw new IllegalStateException("scheme: required");
      if (tolerance.compareTo(Duration.ofSeconds(1)) < 0 || tolerance.compareTo(MAX_TOLERANCE) > 0) {
        throw new IllegalArgumentException("tolerance: " + tolerance + " is outside 1 s..24 h");
      }
      return new CallbackVerifier(this);
    }
  }
}

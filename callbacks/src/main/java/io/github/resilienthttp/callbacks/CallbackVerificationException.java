package io.github.resilienthttp.callbacks;

/**
 * A delivery failed verification and must not be processed.
 *
 * <p>The three subclasses say why: {@link MalformedCallbackException} (a header is missing or cannot be
 * parsed), {@link SignatureMismatchException} (no signature matches any secret: forged, altered, or
 * signed with a secret the receiver does not know) and {@link TimestampOutOfToleranceException}
 * (authentic, but signed too long ago or too far in the future: a replay or a skewed clock).
 *
 * <p>Messages name the scheme and the header, never a secret, a signature value or the body, so they
 * are safe to log and to return to the sender.
 */
public abstract class CallbackVerificationException extends Exception {
  private static final long serialVersionUID = 1L;

  /** The rejecting scheme's name. */
  private final String scheme;

  CallbackVerificationException(String scheme, String message) {
    super(scheme + ": " + message);
    this.scheme = scheme;
  }

  /** {@return the name of the scheme that rejected the delivery} */
  public String scheme() {
    return scheme;
  }
}

package io.github.resilienthttp;

/**
 * A resume token refused: text that is not a token ({@link ResumeToken#parse(String)}, Java
 * deserialization), or a token this client will not act on ({@link ResilientHttpClient#resume},
 * {@link ResilientHttpClient#cancelOnServer}, {@link ResilientHttpClient#verifyResumeToken}).
 * Nothing was sent. The {@link #reason() reason} says which, in words fit for logs and a caller's
 * error message; the token's URLs are never repeated (they may carry pre-signed queries).
 *
 * <p>An {@link IllegalArgumentException}, so callers that caught that from {@code parse} still do.
 */
public final class InvalidResumeTokenException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** The text is not a token: wrong prefix, base64url, fields, lengths, URL, key or time. */
  public static final String MALFORMED = "malformed";
  /**
   * The token carries no signature (written by a version before signed tokens, or built with
   * {@link ResumeToken#forSubmit} by hand) and its origins are not among those the client accepts
   * unsigned tokens for.
   */
  public static final String UNSIGNED = "unsigned";
  /** The signature does not match any of the client's keys: altered, or signed with another key. */
  public static final String BAD_SIGNATURE = "bad-signature";
  /** The key's creation time is after the client's clock (plus a minute of skew). */
  public static final String KEY_TIME_IN_FUTURE = "key-time-in-future";

  /** Why the token was refused. */
  private final String reason;

  /**
   * A refusal.
   *
   * @param reason one of the constants of this class
   * @param message what is wrong and what to do
   */
  public InvalidResumeTokenException(String reason, String message) {
    super(message);
    this.reason = reason;
  }

  /**
   * A refusal with its cause.
   *
   * @param reason one of the constants of this class
   * @param message what is wrong and what to do
   * @param cause the cause
   */
  public InvalidResumeTokenException(String reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /**
   * {@return why the token was refused: {@link #MALFORMED}, {@link #UNSIGNED},
   * {@link #BAD_SIGNATURE} or {@link #KEY_TIME_IN_FUTURE}}
   */
  public String reason() {
    return reason;
  }
}

package io.github.resilienthttp.callbacks;

/**
 * A signature header is missing, repeated or cannot be parsed, or the event ID is unusable. The
 * message names the header and what is wrong with it, never its value.
 */
public final class MalformedCallbackException extends CallbackVerificationException {
  private static final long serialVersionUID = 1L;

  /** The offending header. */
  private final String header;

  /**
   * For {@link SignatureScheme} implementations.
   *
   * @param scheme the scheme's name
   * @param header the offending header (or {@code "body"})
   * @param problem what is wrong, without the header's value
   */
  public MalformedCallbackException(String scheme, String header, String problem) {
    super(scheme, header + " " + problem);
    this.header = header;
  }

  /** {@return the header that is missing or malformed} */
  public String header() {
    return header;
  }
}

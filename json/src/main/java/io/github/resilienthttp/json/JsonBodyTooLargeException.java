package io.github.resilienthttp.json;

/**
 * A response body was longer than the codec's {@link JsonCodec#maxBodyBytes() limit}. Reading stopped
 * at the limit (plus at most one 8 KiB segment), so no more memory than that was used; when the
 * {@code Content-Length} already said the body was too long, nothing was read at all. The response
 * was closed.
 */
public class JsonBodyTooLargeException extends JsonBodyException {
  private static final long serialVersionUID = 1L;

  /** The limit that was exceeded, in bytes. */
  private final long limitBytes;
  /** The declared body length in bytes, or -1. */
  private final long contentLength;

  /**
   * Creates the exception.
   *
   * @param statusCode the response's status code
   * @param expectedType the canonical name of the type the body was to be read as
   * @param limitBytes the limit, in bytes
   * @param contentLength the body's declared length in bytes, or -1 when not declared
   */
  public JsonBodyTooLargeException(
      int statusCode, String expectedType, long limitBytes, long contentLength) {
    super("the HTTP " + statusCode + " response body for " + expectedType + " is larger than the"
        + " limit of " + limitBytes + " bytes (maxBodyBytes)"
        + (contentLength >= 0 ? "; Content-Length: " + contentLength : ""),
        statusCode, expectedType, null);
    this.limitBytes = limitBytes;
    this.contentLength = contentLength;
  }

  /**
   * The limit that was exceeded, in bytes.
   *
   * @return the limit that was exceeded, in bytes
   */
  public long limitBytes() {
    return limitBytes;
  }

  /**
   * The body's declared {@code Content-Length} in bytes, or -1 when it was not declared.
   *
   * @return the body's declared length in bytes, or -1
   */
  public long contentLength() {
    return contentLength;
  }
}

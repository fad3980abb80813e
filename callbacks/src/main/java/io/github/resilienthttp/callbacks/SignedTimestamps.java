package io.github.resilienthttp.callbacks;

import java.time.Instant;

/**
 * Reads a scheme's signed Unix-seconds timestamp. A value that is not a decimal integer, or lies
 * outside 1970-01-01 to 9999-12-31 (a timestamp beyond Java's date range, such as
 * {@code 9223372036854775807}, would otherwise throw {@link java.time.DateTimeException}), is a
 * {@link MalformedCallbackException}: every malformed timestamp is one of the typed verification
 * failures. Not API.
 */
final class SignedTimestamps {
  /** 9999-12-31T23:59:59Z: later than any delivery, inside {@link Instant}'s range. */
  static final long MAX_SECONDS = 253_402_300_799L;

  private SignedTimestamps() {}

  /**
   * The instant {@code seconds} after the epoch, when in range.
   *
   * @param scheme the scheme's name, for the message
   * @param header the header that carried it, for the message
   * @param seconds the signed seconds
   * @return the instant
   * @throws MalformedCallbackException when out of range
   */
  static Instant checked(String scheme, String header, long seconds)
      throws MalformedCallbackException {
    if (seconds < 0 || seconds > MAX_SECONDS) {
      throw new MalformedCallbackException(scheme, header, "is out of range (0 to " + MAX_SECONDS
          + " seconds)");
    }
    return Instant.ofEpochSecond(seconds);
  }
}

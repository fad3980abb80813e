package io.github.resilienthttp;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.Optional;

/**
 * Parses the {@code Retry-After} response header (RFC 9110 §10.2.3): either delta-seconds
 * ({@code Retry-After: 120}) or an HTTP-date in any of the three formats of RFC 9110 §5.6.7
 * (IMF-fixdate {@code Sun, 06 Nov 1994 08:49:37 GMT}, obsolete RFC 850
 * {@code Sunday, 06-Nov-94 08:49:37 GMT} and ANSI C asctime {@code Sun Nov  6 08:49:37 1994}).
 *
 * <p>Never throws on server input: a malformed or negative value yields {@link Optional#empty()}
 * (the header is ignored), a date in the past yields {@link Duration#ZERO}, and an absurdly large value
 * saturates at {@link #MAX} so that callers can compare it with their own cap. A date is rounded up to
 * the next millisecond, so a retry never starts before the time the server named.
 *
 * <p>Stateless and thread-safe.
 */
public final class RetryAfter {

  /** The largest delay this parser returns (about 292 years); larger values are clamped to it. */
  public static final Duration MAX = Duration.ofSeconds(Long.MAX_VALUE / 1_000_000_000L);

  /** Longer values are certainly garbage; refusing them early keeps parsing cheap. */
  private static final int MAX_LENGTH = 64;

  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC)
          .withResolverStyle(ResolverStyle.SMART);

  private static final DateTimeFormatter ASCTIME =
      new DateTimeFormatterBuilder()
          .parseCaseInsensitive()
          .appendPattern("EEE MMM")
          .appendLiteral(' ')
          .optionalStart().appendLiteral(' ').optionalEnd()
          .appendValue(ChronoField.DAY_OF_MONTH, 1, 2, java.time.format.SignStyle.NOT_NEGATIVE)
          .appendPattern(" HH:mm:ss yyyy")
          .toFormatter(Locale.US)
          .withZone(ZoneOffset.UTC);

  private RetryAfter() {}

  /**
   * The delay the server asked for, measured from {@code now}.
   *
   * @param value the header value, may be {@code null}
   * @param now the current wall-clock time (used only for HTTP-dates)
   * @return the delay, or empty when the value is missing, malformed or negative
   */
  public static Optional<Duration> parse(String value, Instant now) {
    if (value == null) {
      return Optional.empty();
    }
    String v = value.trim();
    if (v.isEmpty() || v.length() > MAX_LENGTH) {
      return Optional.empty();
    }
    if (isDigits(v)) {
      return Optional.of(deltaSeconds(v));
    }
    Instant date = parseHttpDate(v, now);
    if (date == null) {
      return Optional.empty();
    }
    if (!date.isAfter(now)) {
      return Optional.of(Duration.ZERO);
    }
    Duration d = Duration.between(now, date);
    // Round up to whole milliseconds: never retry early.
    long millis = d.toMillis();
    Duration rounded = Duration.ofMillis(millis);
    return Optional.of(rounded.compareTo(d) < 0 ? rounded.plusMillis(1) : rounded);
  }

  private static boolean isDigits(String v) {
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
    }
    return true;
  }

  private static Duration deltaSeconds(String value) {
    // Leading zeros are allowed (RFC 9110 §10.2.3: 1*DIGIT) and mean nothing.
    String digits = value;
    int firstNonZero = 0;
    while (firstNonZero < digits.length() - 1 && digits.charAt(firstNonZero) == '0') {
      firstNonZero++;
    }
    digits = digits.substring(firstNonZero);
    // Up to 18 digits always fit in a long; more is absurd and saturates.
    if (digits.length() > 18) {
      return MAX;
    }
    long seconds = Long.parseLong(digits);
    return seconds > MAX.getSeconds() ? MAX : Duration.ofSeconds(seconds);
  }

  private static Instant parseHttpDate(String v, Instant now) {
    try {
      return ZonedDateTime.parse(v, IMF_FIXDATE).toInstant();
    } catch (DateTimeException ignored) {
      // try the obsolete formats below
    }
    try {
      return ZonedDateTime.parse(v, rfc850(now)).toInstant();
    } catch (DateTimeException ignored) {
      // try asctime below
    }
    try {
      return ZonedDateTime.parse(v, ASCTIME).toInstant();
    } catch (DateTimeException ignored) {
      return null;
    }
  }

  /**
   * RFC 850 dates have a two-digit year. RFC 9110 §5.6.7: a year that appears to be more than 50 years
   * in the future is taken as the most recent past year with the same last two digits.
   */
  private static DateTimeFormatter rfc850(Instant now) {
    LocalDate base = now.atZone(ZoneOffset.UTC).toLocalDate().minusYears(49);
    return new DateTimeFormatterBuilder()
        .parseCaseInsensitive()
        .appendPattern("EEEE, dd-MMM-")
        .appendValueReduced(ChronoField.YEAR, 2, 2, base)
        .appendPattern(" HH:mm:ss 'GMT'")
        .toFormatter(Locale.US)
        .withZone(ZoneOffset.UTC);
  }
}

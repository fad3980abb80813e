package io.github.resilienthttp;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the {@code Retry-After} response header (RFC 9110 §10.2.3): either delta-seconds
 * ({@code Retry-After: 120}) or an HTTP-date in any of the three formats of RFC 9110 §5.6.7
 * (IMF-fixdate {@code Sun, 06 Nov 1994 08:49:37 GMT}, obsolete RFC 850
 * {@code Sunday, 06-Nov-94 08:49:37 GMT} and ANSI C asctime {@code Sun Nov  6 08:49:37 1994}),
 * read as robustly as RFC 9110 §5.6.7 asks of recipients: a one-digit day ({@code Tue, 1 Dec 2026
 * 08:25:13 GMT}, what Java's {@code RFC_1123_DATE_TIME} writes on days 1 to 9), {@code UTC} or
 * {@code +0000} for {@code GMT}, and a weekday that does not match the date are accepted.
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

  /**
   * IMF-fixdate and RFC 850, read leniently: optional weekday (any name, not checked against the
   * date: RFC 9110 §5.6.7 lets recipients ignore a wrong one), one- or two-digit day, day, month and
   * year separated by spaces or dashes, a two- or four-digit year, and the zone {@code GMT},
   * {@code UTC}, {@code UT}, {@code Z} or a numeric offset such as {@code +0000}.
   */
  private static final Pattern DAY_FIRST = Pattern.compile(
      "(?:[A-Za-z]{3,9},?\\s+)?(\\d{1,2})[\\s-]+([A-Za-z]{3})[\\s-]+(\\d{4}|\\d{2})\\s+"
          + "(\\d{1,2}):(\\d{2}):(\\d{2})\\s*(GMT|UTC|UT|Z|[+-]\\d{4})",
      Pattern.CASE_INSENSITIVE);

  /** ANSI C asctime ({@code Sun Nov  6 08:49:37 1994}), in GMT; the weekday optional and unchecked. */
  private static final Pattern ASCTIME = Pattern.compile(
      "(?:[A-Za-z]{3,9},?\\s+)?([A-Za-z]{3})\\s+(\\d{1,2})\\s+(\\d{1,2}):(\\d{2}):(\\d{2})\\s+(\\d{4})"
          + "(?:\\s*(GMT|UTC))?",
      Pattern.CASE_INSENSITIVE);

  private static final String[] MONTHS =
      {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};

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

  /**
   * An HTTP-date in any of RFC 9110's three forms, read as robustly as §5.6.7 asks (see
   * {@link #DAY_FIRST}); {@code null} for anything else or an impossible date (31 April).
   */
  static Instant parseHttpDate(String v, Instant now) {
    Matcher m = DAY_FIRST.matcher(v);
    if (m.matches()) {
      return instant(now, m.group(3), m.group(2), m.group(1), m.group(4), m.group(5), m.group(6),
          m.group(7));
    }
    m = ASCTIME.matcher(v);
    if (m.matches()) {
      return instant(now, m.group(6), m.group(1), m.group(2), m.group(3), m.group(4), m.group(5),
          "GMT");
    }
    return null;
  }

  private static Instant instant(Instant now, String year, String month, String day, String hour,
      String minute, String second, String zone) {
    int monthNumber = month(month);
    if (monthNumber == 0) {
      return null;
    }
    int y = Integer.parseInt(year);
    if (year.length() == 2) {
      y = twoDigitYear(y, now);
    }
    int sec = Integer.parseInt(second);
    try {
      LocalDateTime local = LocalDateTime.of(y, monthNumber, Integer.parseInt(day),
          Integer.parseInt(hour), Integer.parseInt(minute), sec == 60 ? 59 : sec); // leap second
      return local.toInstant(offset(zone));
    } catch (DateTimeException impossible) {
      return null;
    }
  }

  private static int month(String name) {
    for (int i = 0; i < MONTHS.length; i++) {
      if (MONTHS[i].equalsIgnoreCase(name)) {
        return i + 1;
      }
    }
    return 0;
  }

  /** {@code GMT}, {@code UTC}, {@code UT}, {@code Z} or {@code +hhmm}/{@code -hhmm}. */
  private static ZoneOffset offset(String zone) {
    char sign = zone.charAt(0);
    if (sign != '+' && sign != '-') {
      return ZoneOffset.UTC;
    }
    int hours = Integer.parseInt(zone.substring(1, 3));
    int minutes = Integer.parseInt(zone.substring(3, 5));
    if (minutes > 59) {
      throw new DateTimeException("offset minutes " + minutes);
    }
    int seconds = hours * 3600 + minutes * 60;
    return ZoneOffset.ofTotalSeconds(sign == '-' ? -seconds : seconds); // > 18 h: rejected
  }

  /**
   * RFC 850 dates have a two-digit year. RFC 9110 §5.6.7: a year that appears to be more than 50
   * years in the future is taken as the most recent past year with the same last two digits.
   */
  private static int twoDigitYear(int yy, Instant now) {
    int current = now.atZone(ZoneOffset.UTC).getYear();
    int y = current - Math.floorMod(current, 100) + yy;
    if (y > current + 50) {
      y -= 100;
    } else if (y < current - 49) {
      y += 100;
    }
    return y;
  }
}

package io.github.resilienthttp.internal.util;

import java.time.Duration;
import java.util.Objects;

/**
 * The one range check of every validating builder: a value outside its range fails with an
 * {@link IllegalArgumentException} whose message names the field, the range and the value, in one
 * format everywhere: {@code "<field> must be in <min>..<max> but was <value>"}, or
 * {@code "<field> must be at least <min> but was <value>"} when there is no upper bound. Durations
 * print in ISO-8601 ({@code PT0.001S..PT24H}); a whole-number bound of a {@code double} prints
 * without a fraction ({@code 50..99.9}). A {@code null} duration fails with a
 * {@link NullPointerException} naming the field. Stateless. Not API.
 */
public final class Ranges {
  /** The longest duration any setting takes: 24 h. */
  public static final Duration MAX_DURATION = Duration.ofHours(24);

  private Ranges() {}

  /**
   * Checks {@code min <= value <= max}.
   *
   * @param field the setting's name, for the message
   * @param value the value
   * @param min the least value allowed
   * @param max the greatest value allowed
   * @return {@code value}
   * @throws IllegalArgumentException when it is out of range
   */
  public static long check(String field, long value, long min, long max) {
    if (value < min || value > max) {
      throw outOfRange(field, min + ".." + max, value);
    }
    return value;
  }

  /**
   * Checks {@code min <= value <= max}.
   *
   * @param field the setting's name, for the message
   * @param value the value
   * @param min the least value allowed
   * @param max the greatest value allowed
   * @return {@code value}
   * @throws IllegalArgumentException when it is out of range
   */
  public static int check(String field, int value, int min, int max) {
    return (int) check(field, (long) value, min, max);
  }

  /**
   * Checks {@code min <= value <= max}; {@code NaN} is out of every range.
   *
   * @param field the setting's name, for the message
   * @param value the value
   * @param min the least value allowed
   * @param max the greatest value allowed
   * @return {@code value}
   * @throws IllegalArgumentException when it is out of range or {@code NaN}
   */
  public static double check(String field, double value, double min, double max) {
    if (!(value >= min && value <= max)) { // rejects NaN too
      throw outOfRange(field, bound(min) + ".." + bound(max), value);
    }
    return value;
  }

  /**
   * Checks {@code min <= value <= max}.
   *
   * @param field the setting's name, for the message
   * @param value the value
   * @param min the shortest duration allowed
   * @param max the longest duration allowed
   * @return {@code value}
   * @throws NullPointerException when {@code value} is {@code null}
   * @throws IllegalArgumentException when it is out of range
   */
  public static Duration check(String field, Duration value, Duration min, Duration max) {
    Objects.requireNonNull(value, field);
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw outOfRange(field, min + ".." + max, value);
    }
    return value;
  }

  /**
   * Checks {@code min <= value <= 24 h} ({@link #MAX_DURATION}).
   *
   * @param field the setting's name, for the message
   * @param value the value
   * @param min the shortest duration allowed
   * @return {@code value}
   * @throws NullPointerException when {@code value} is {@code null}
   * @throws IllegalArgumentException when it is out of range
   */
  public static Duration check(String field, Duration value, Duration min) {
    return check(field, value, min, MAX_DURATION);
  }

  /**
   * Checks {@code value >= min}, for a setting without an upper bound.
   *
   * @param field the setting's name, for the message
   * @param value the value
   * @param min the least value allowed
   * @return {@code value}
   * @throws IllegalArgumentException when it is less
   */
  public static long atLeast(String field, long value, long min) {
    if (value < min) {
      throw tooSmall(field, String.valueOf(min), value);
    }
    return value;
  }

  /**
   * Checks {@code value >= min}, for a duration without an upper bound.
   *
   * @param field the setting's name, for the message
   * @param value the value
   * @param min the shortest duration allowed
   * @return {@code value}
   * @throws NullPointerException when {@code value} is {@code null}
   * @throws IllegalArgumentException when it is shorter
   */
  public static Duration atLeast(String field, Duration value, Duration min) {
    Objects.requireNonNull(value, field);
    if (value.compareTo(min) < 0) {
      throw tooSmall(field, min.toString(), value);
    }
    return value;
  }

  private static IllegalArgumentException outOfRange(String field, String range, Object value) {
    return new IllegalArgumentException(field + " must be in " + range + " but was " + value);
  }

  private static IllegalArgumentException tooSmall(String field, String min, Object value) {
    return new IllegalArgumentException(field + " must be at least " + min + " but was " + value);
  }

  private static String bound(double d) {
    return d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 1e15
        ? Long.toString((long) d) : Double.toString(d);
  }
}

package io.github.resilienthttp.testkit;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * How long after a dependency recovers its callers succeed again: the start of the first rolling
 * window after recovery from which every window, up to the end of the measurement, has at least the
 * given share of successful operations. Windows are taken over completion time and slide by a fixed
 * step. Used by the outage simulation and the fault comparison ("T99").
 *
 * <p>Stateless and thread-safe.
 */
public final class RecoveryTime {
  private RecoveryTime() {}

  /**
   * The time from {@code recoveryNanos} to the start of the first window from which every later
   * window is at least {@code successPercent} % successful.
   *
   * @param ops the completed operations
   * @param endNanos when each operation completed, on the same clock as the other times
   * @param succeeded whether each operation succeeded
   * @param recoveryNanos when the dependency recovered
   * @param untilNanos the end of the measurement
   * @param window the width of a window
   * @param step how far a window slides each time
   * @param successPercent the share of successes a window needs, 0 to 100
   * @param <T> the type of an operation's record
   * @return the time to recover, or empty when the last window still fell short
   */
  public static <T> Optional<Duration> of(List<T> ops, ToLongFunction<T> endNanos,
      Predicate<T> succeeded, long recoveryNanos, long untilNanos, Duration window, Duration step,
      int successPercent) {
    long width = window.toNanos();
    long firstGood = -1;
    for (long from = recoveryNanos; from + width <= untilNanos; from += step.toNanos()) {
      int total = 0;
      int ok = 0;
      for (T op : ops) {
        long end = endNanos.applyAsLong(op);
        if (end >= from && end < from + width) {
          total++;
          ok += succeeded.test(op) ? 1 : 0;
        }
      }
      boolean good = total > 0 && ok * 100L >= (long) total * successPercent;
      if (!good) {
        firstGood = -1;
      } else if (firstGood < 0) {
        firstGood = from;
      }
    }
    return firstGood < 0 ? Optional.empty() : Optional.of(Duration.ofNanos(firstGood - recoveryNanos));
  }
}

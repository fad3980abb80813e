package io.github.resilienthttp.internal.deadline;

/**
 * The watchdog's own node in a watched operation: the link of {@link DeadlineWatchdog}'s lists and
 * whether the operation is in them. A base class rather than a separate object, so that joining
 * the watchdog allocates nothing; its fields are the watchdog's alone (package-private). Not API.
 *
 * @param <T> the watched operation's type
 */
public abstract class WatchEntry<T extends WatchEntry<T>> {
  /** The next operation in the watchdog's list; only the watchdog reads and writes it. */
  T watchNext;
  /**
   * Whether the watchdog has this operation in its lists. Cleared (by the watchdog, after unlinking
   * it) when the operation is forgotten or its deadline passed.
   */
  volatile boolean inWatchdog;

  static <T extends WatchEntry<T>> T next(T entry) {
    return entry.watchNext;
  }

  static <T extends WatchEntry<T>> void link(T entry, T next) {
    entry.watchNext = next;
  }

  static <T extends WatchEntry<T>> void watched(T entry, boolean watched) {
    entry.inWatchdog = watched;
  }

  /**
   * Marks {@code entry} no longer watched, by a caller that took a done operation off a stack's
   * head in passing. A release store, so the caller pays no fence: the flag decides whether an
   * attempt joins the watchdog, and an operation that ended never joins again whatever it says.
   */
  static <T extends WatchEntry<T>> void forget(T entry) {
    IN_WATCHDOG.setRelease(entry, false);
  }

  /**
   * Marks {@code entry} watched just before it joins the list: the joining compare-and-set that
   * follows orders this write, so it needs no fence of its own.
   */
  static <T extends WatchEntry<T>> void joining(T entry) {
    IN_WATCHDOG.setRelease(entry, true);
  }

  private static final java.lang.invoke.VarHandle IN_WATCHDOG;

  static {
    try {
      IN_WATCHDOG = java.lang.invoke.MethodHandles.lookup()
          .findVarHandle(WatchEntry.class, "inWatchdog", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Whether the watchdog has this operation in its lists (see {@link DeadlineWatchdog#watch}). */
  public final boolean isWatched() {
    return inWatchdog;
  }
}

package io.github.resilienthttp.internal.util;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The few rules that several layers share, each in one place: the deadline's floor and what a
 * failed future failed with. Not API.
 */
public final class Floors {
  /**
   * The least time an attempt, a poll or a query needs. Less than this left before the deadline, and
   * the deadline is taken as passed, everywhere: before an attempt, after a failed one (a timeout
   * that fired just before the deadline is the deadline's doing), for the wait before a retry, a
   * poll or an outcome query.
   */
  public static final long MIN_ATTEMPT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private Floors() {}

  /**
   * What a future failed with: {@code e} without the {@link CompletionException} and
   * {@link ExecutionException} wrappers that {@code CompletableFuture} stages add.
   *
   * @param e a future's failure
   * @return its cause
   */
  public static Throwable unwrap(Throwable e) {
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}

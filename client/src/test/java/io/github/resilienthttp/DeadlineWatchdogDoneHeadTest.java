package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.resilienthttp.internal.deadline.DeadlineWatchdog;
import io.github.resilienthttp.internal.engine.Execution;
import io.github.resilienthttp.internal.engine.Run;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Test;

/**
 * A caller joining the watchdog takes the place of a done operation at its stack's head, and
 * forgets it as a sweep would (docs/design/deadline-watchdog.md). Operations here are defined,
 * never started, and join a watchdog of the test's with one stripe, so every join here is on one
 * stack; a sweep runs every 10 ms on Okio's thread, so a scenario that a sweep overtook is tried
 * again with a new watchdog.
 */
class DeadlineWatchdogDoneHeadTest {
  private static final int TRIES = 50;
  private final OkHttpClient okHttp = new OkHttpClient();
  private final ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).build();
  private final Request request = new Request.Builder().url("http://127.0.0.1:1/").build();

  private Execution defined(Duration deadline) {
    Run op = new Run(client.runtime());
    op.define(request, null, false, deadline, null, null);
    return op;
  }

  /** What a joining caller saw before it replaced a done head: the head and the one below it. */
  private static final class Replacements implements BiConsumer<Execution, Execution> {
    final List<Execution[]> seen = new CopyOnWriteArrayList<>();
    volatile BiConsumer<Execution, Execution> then = (head, below) -> { };

    @Override
    public void accept(Execution head, Execution below) {
      seen.add(new Execution[] {head, below});
      then.accept(head, below);
    }
  }

  /**
   * A watchdog of one stripe that has swept once with {@code running} on it, so the next tick is
   * about 10 ms away: the few joins that follow usually happen before it.
   */
  private DeadlineWatchdog sweptOnce(Replacements hook, Execution running) {
    DeadlineWatchdog watchdog = new DeadlineWatchdog(1, hook);
    watchdog.watch(running);
    await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(5))
        .until(() -> watchdog.nextSweepNanos() != 0);
    // Set as the first sweep starts: this waits for it to end (it holds the watchdog's lock).
    assertThat(watchdog.watchedOperations()).containsExactly(running);
    return watchdog;
  }

  /** A watchdog swept once with {@code first}, whose stack then holds {@code below} and a done one. */
  private record DoneAbove(DeadlineWatchdog watchdog, Execution first, Execution below,
      Execution done) {}

  private DoneAbove doneAbove(Replacements hook, Duration belowDeadline) {
    Execution first = defined(Duration.ofSeconds(30));
    DeadlineWatchdog watchdog = sweptOnce(hook, first);
    Execution below = defined(belowDeadline);
    Execution done = defined(Duration.ofSeconds(30));
    watchdog.watch(below);
    watchdog.watch(done);
    endWithCall(done);
    return new DoneAbove(watchdog, first, below, done);
  }

  /** {@code op} ends without a response, after joining with a call of its own. */
  private void endWithCall(Execution op) {
    Call call = okHttp.newCall(request);
    op.watchPlainCall(call); // already watched: sets the watched call, joins nothing
    assertThat(op.watchedCall()).isSameAs(call);
    op.endWithoutResponse();
    assertThat(op.callDone()).isTrue();
  }

  @Test
  void aDoneHeadIsReplacedAndForgottenByTheJoiningCaller() {
    for (int i = 0; i < TRIES; i++) {
      Replacements hook = new Replacements();
      Execution running = defined(Duration.ofSeconds(30));
      DeadlineWatchdog watchdog = sweptOnce(hook, running);
      Execution done = defined(Duration.ofSeconds(30));
      watchdog.watch(done);
      endWithCall(done);
      Execution next = defined(Duration.ofSeconds(30));
      watchdog.watch(next);
      if (hook.seen.isEmpty()) {
        continue; // a sweep took the stack before the join: try again
      }
      assertThat(hook.seen).hasSize(1);
      assertThat(hook.seen.get(0)[0]).isSameAs(done);
      assertThat(hook.seen.get(0)[1]).as("nothing below it: the sweep took the rest").isNull();
      // Forgotten by the caller: not watched, no reference to its call.
      assertThat(done.isWatched()).isFalse();
      assertThat(done.watchedCall()).isNull();
      assertThat(next.isWatched()).isTrue();
      assertThat(watchdog.watchedOperations()).containsExactlyInAnyOrder(running, next);
      return;
    }
    throw new AssertionError("a sweep overtook every one of " + TRIES + " tries");
  }

  /**
   * The joining caller puts its operation where the done one was, linked to what was below it: the
   * operations under a done head stay on the stack, and are swept.
   */
  @Test
  void aDoneHeadIsReplacedAndTheOperationsBelowItStayWatched() {
    for (int i = 0; i < TRIES; i++) {
      Replacements hook = new Replacements();
      DoneAbove s = doneAbove(hook, Duration.ofSeconds(30));
      Execution next = defined(Duration.ofSeconds(30));
      s.watchdog().watch(next);
      if (hook.seen.isEmpty() || hook.seen.get(0)[1] != s.below()) {
        continue; // a sweep took the stack before the join: try again
      }
      assertThat(hook.seen).hasSize(1);
      assertThat(hook.seen.get(0)[0]).isSameAs(s.done());
      assertThat(s.done().isWatched()).isFalse();
      assertThat(s.below().isWatched()).isTrue();
      assertThat(s.watchdog().watchedOperations())
          .containsExactlyInAnyOrder(s.first(), s.below(), next);
      assertThat(s.watchdog().watchedCount()).isEqualTo(3);
      return;
    }
    throw new AssertionError("a sweep overtook every one of " + TRIES + " tries");
  }

  /**
   * The first sweep of an idle watchdog arms the next one at the earliest deadline it saw, not at
   * the regular tick: an operation due in 8 ms is swept at its deadline, not 10 ms after the join.
   * A try where the operation was swept before this thread read the armed time (a first sweep
   * later than the deadline, or a slow reader) is made again.
   */
  @Test
  void theSweepAfterAJoinIsArmedAtTheEarliestDeadline() {
    for (int i = 0; i < 20; i++) {
      DeadlineWatchdog watchdog = new DeadlineWatchdog(1);
      Execution soon = defined(Duration.ofMillis(8));
      watchdog.watch(soon);
      await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(5))
          .until(() -> watchdog.nextSweepNanos() != 0);
      watchdog.watchedCount(); // takes the sweep's lock: returns once the first sweep has ended
      long armed = watchdog.armedTickNanos();
      if (!soon.isWatched()) {
        continue; // already swept: the time read may be that of a later arming
      }
      assertThat(armed).as("armed by the first sweep").isEqualTo(soon.realDeadlineNanos());
      await().atMost(Duration.ofSeconds(5)).until(() -> !soon.isWatched());
      return;
    }
    throw new AssertionError("swept before the armed time could be read, 20 times in a row");
  }

  /**
   * An operation that ended never joins again, whatever its watched flag says: a caller that read
   * it at a stack's head as done may still be about to replace it there.
   */
  @Test
  void anOperationThatEndedNeverJoins() {
    DeadlineWatchdog watchdog = new DeadlineWatchdog(1);
    Execution ended = defined(Duration.ofSeconds(30));
    ended.endWithoutResponse();
    watchdog.watch(ended);
    assertThat(ended.isWatched()).isFalse();
    assertThat(watchdog.watchedCount()).isZero();
    assertThat(watchdog.isRunning()).as("nothing to sweep").isFalse();
  }

  @Test
  void aRunningHeadIsNeverReplaced() {
    for (int i = 0; i < 20; i++) {
      Replacements hook = new Replacements();
      Execution first = defined(Duration.ofSeconds(30));
      DeadlineWatchdog watchdog = sweptOnce(hook, first);
      Execution running = defined(Duration.ofSeconds(30));
      watchdog.watch(running);
      Execution next = defined(Duration.ofSeconds(30));
      watchdog.watch(next);
      assertThat(hook.seen).isEmpty();
      assertThat(watchdog.watchedOperations()).containsExactlyInAnyOrder(first, running, next);
      assertThat(running.isWatched()).isTrue();
    }
  }

  /**
   * A sweep takes the stack between the caller's read of the done head and its compare-and-set:
   * the compare-and-set fails and the caller joins the now empty stack. The operation that was
   * below the done head is the sweep's now, and must not be linked below the new one as well.
   */
  @Test
  void aSweepTakingTheStackFirstMakesTheCallerJoinAgain() {
    for (int i = 0; i < TRIES; i++) {
      Replacements hook = new Replacements();
      DoneAbove s = doneAbove(hook, Duration.ofSeconds(2));
      DeadlineWatchdog watchdog = s.watchdog();
      Execution first = s.first();
      Execution below = s.below();
      Execution done = s.done();
      // Held between the read and the compare-and-set until a sweep took the stack and forgot the
      // done operation (the first replacement only).
      hook.then = (head, under) -> {
        if (hook.seen.size() == 1 && under == below) {
          await().atMost(Duration.ofSeconds(5)).until(() -> !head.isWatched());
        }
      };
      Execution next = defined(Duration.ofMillis(2100));
      watchdog.watch(next);
      if (hook.seen.isEmpty() || hook.seen.get(0)[1] != below) {
        continue; // a sweep took the stack before the join: try again
      }
      assertThat(hook.seen).as("replaced at most once; the second try pushes").hasSize(1);
      assertThat(done.isWatched()).isFalse();
      assertThat(watchdog.watchedOperations()).containsExactlyInAnyOrder(first, below, next);
      assertThat(watchdog.watchedCount()).isEqualTo(3);
      // Both are still swept at their deadlines.
      await().atMost(Duration.ofSeconds(5)).until(() -> !below.isWatched() && !next.isWatched());
      assertThat(watchdog.watchedOperations()).containsExactly(first);
      return;
    }
    throw new AssertionError("a sweep overtook every one of " + TRIES + " tries");
  }
}

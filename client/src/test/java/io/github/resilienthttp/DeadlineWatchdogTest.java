package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilienthttp.internal.deadline.DeadlineWatchdog;
import io.github.resilienthttp.internal.engine.Attempt;
import io.github.resilienthttp.internal.engine.Execution;
import io.github.resilienthttp.internal.engine.Run;
import java.io.IOException;
import java.time.Duration;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Test;

/**
 * The deadline's backstop on its own, without the network: calls are created, never executed, and
 * handed to the watchdog directly, so that when it stops a call, what it forgets and when it stops
 * sweeping can be asserted exactly.
 */
class DeadlineWatchdogTest {
  private final ResilientHttpClient client = ResilientHttpClient.wrap(new OkHttpClient()).build();
  private final DeadlineWatchdog watchdog = client.runtime().deadlineWatchdog();
  private final Request request = new Request.Builder().url("http://127.0.0.1:1/").build();

  private Call watch(Duration deadline) {
    Run op = new Run(client.runtime());
    op.define(request, null, false, deadline, null, null);
    return newAttemptCall(op, Long.MAX_VALUE); // tagged and watched, as for an attempt
  }

  private Call newAttemptCall(Execution op, long remainingNanos) {
    Run run = (Run) op;
    Attempt attempt = run.countAttempt(new Attempt(run), AttemptKind.FIRST,
        run.deadlineNanos() - remainingNanos);
    return op.newAttemptCall(attempt, request);
  }

  private static Execution op(Call call) {
    return Execution.of(call);
  }

  @Test
  void cancelsAtTheDeadlineForgetsWhatIsDoneAndStopsWhenIdle() {
    assertThat(watchdog.isRunning()).isFalse();
    Call longCall = watch(Duration.ofSeconds(30));
    assertThat(watchdog.isRunning()).isTrue();

    Call shortCall = watch(Duration.ofMillis(300));
    await().atMost(Duration.ofSeconds(5)).until(shortCall::isCanceled);
    assertThat(longCall.isCanceled()).isFalse();
    assertThat(watchdog.watchedCount()).isEqualTo(1);

    // An async operation's earlier attempt ends while the operation goes on: not forgotten.
    watchdog.listener().callEnd(longCall);
    await().pollDelay(Duration.ofMillis(50)).atMost(Duration.ofSeconds(1)).until(() -> true);
    assertThat(watchdog.watchedCount()).isEqualTo(1);

    // The operation ended, and its call had ended: forgotten, not cancelled, and it keeps no
    // reference to the call (a run that goes on waiting keeps none of its attempts).
    Execution ended = op(longCall);
    assertThat(ended.watchedCall()).isSameAs(longCall);
    ended.end();
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.watchedCount() == 0);
    assertThat(longCall.isCanceled()).isFalse();
    assertThat(ended.watchedCall()).isNull();

    // With nothing watched for IDLE_NANOS (1 s), the sweeps stop...
    await().atMost(Duration.ofSeconds(5)).until(() -> !watchdog.isRunning());
    // ...and start again with the next operation.
    Call again = watch(Duration.ofMillis(200));
    assertThat(watchdog.isRunning()).isTrue();
    await().atMost(Duration.ofSeconds(5)).until(again::isCanceled);
  }

  @Test
  void aCallStoppedBeforeItStartedFailsAsCancelledWhenItDoesStart() {
    // A call can still be waiting (in OkHttp's dispatcher queue) when its deadline passes. OkHttp
    // enters the call's own timeout when the call starts, so the watchdog must not enter it first:
    // it cancels the call, which then fails as cancelled instead of breaking OkHttp's start.
    Call queued = watch(Duration.ofMillis(50));
    await().atMost(Duration.ofSeconds(5)).until(queued::isCanceled);
    assertThatThrownBy(queued::execute).isInstanceOf(IOException.class)
        .hasMessageContaining("Canceled");
  }

  @Test
  void anOperationDueBeforeTheNextTickArmsItsOwnTimer() {
    watch(Duration.ofSeconds(30));
    // Wait for a tick to have run (it sets the time of the next one).
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.nextSweepNanos() != 0);
    for (int tries = 0; ; tries++) {
      // Start right after a tick, so that the next one is as far away as it gets (up to 10 ms).
      long previousTick = watchdog.nextSweepNanos();
      await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.nextSweepNanos() != previousTick);
      int before = watchdog.earlyTimers();
      long nextTick = watchdog.nextSweepNanos();
      // Due in 1 µs: before the next tick, unless that tick is already overdue (a loaded machine).
      Call soon = watch(Duration.ofNanos(1_000));
      boolean dueFirst =
          System.nanoTime() + 1_000 - nextTick < 0 && watchdog.nextSweepNanos() == nextTick;
      if (!dueFirst && tries < 20) {
        continue;
      }
      assertThat(dueFirst).as("a tick was overdue 20 times in a row").isTrue();
      // Armed by watch() itself, before it returned: not left to the next tick.
      assertThat(watchdog.earlyTimers()).isEqualTo(before + 1);
      long giveUp = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (!soon.isCanceled()) {
        assertThat(System.nanoTime() - giveUp).as("not stopped within 5 s").isNegative();
        Thread.onSpinWait();
      }
      // Stopped by that timer, not by the next tick: a tick sets the time of the one after it as
      // it starts, and both run on Okio's one watchdog thread in the order of their deadlines.
      // Read after the cancel was seen, an unchanged time means the tick had not started.
      boolean beforeTheTick = watchdog.nextSweepNanos() == nextTick;
      if (!beforeTheTick && tries < 20) {
        continue; // the tick ran too before this thread looked: it cannot tell which stopped it
      }
      assertThat(beforeTheTick).as("stopped before the next tick, 20 times in a row").isTrue();
      return;
    }
  }

  @Test
  void anAttemptStartedAfterTheOperationWasDroppedAtItsDeadlineIsWatchedAgain() {
    // The deadline passes in real time while the next attempt is being set up (a fake clock, or a
    // slow bulkhead wait): the watchdog has dropped the operation, and must see the new call.
    Call first = watch(Duration.ofMillis(50));
    await().atMost(Duration.ofSeconds(5)).until(first::isCanceled);
    assertThat(watchdog.watchedCount()).isZero();
    Call second = newAttemptCall(op(first), 1);
    await().atMost(Duration.ofSeconds(5)).until(second::isCanceled);
    assertThat(watchdog.watchedCount()).isZero();
  }

  @Test
  void aCallThatFailedIsForgottenWithoutBeingCancelled() {
    Call call = watch(Duration.ofMillis(300));
    op(call).end();
    watchdog.listener().callFailed(call, new IOException("connection refused"));
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.watchedCount() == 0);
    await().pollDelay(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> true);
    assertThat(call.isCanceled()).isFalse();
  }

  @Test
  void anOperationThatEndedWithoutAResponseIsForgottenAtOnce() {
    Call call = watch(Duration.ofSeconds(30));
    op(call).end();
    op(call).endWithoutResponse();
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.watchedCount() == 0);
    assertThat(call.isCanceled()).isFalse();
  }
}

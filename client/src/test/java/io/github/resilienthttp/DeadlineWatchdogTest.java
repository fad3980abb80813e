package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The deadline's backstop on its own, without the network: calls are created, never executed, and
 * handed to the watchdog directly, so that what it schedules and when it cancels can be asserted
 * exactly. The scheduler records every delay it is asked for.
 */
class DeadlineWatchdogTest {
  private final RecordingScheduler scheduler = new RecordingScheduler();
  private final ResilientHttpClient client = ResilientHttpClient.wrap(new OkHttpClient())
      .scheduler(scheduler).build();
  private final DeadlineWatchdog watchdog = client.deadlineWatchdog();
  private final Request request = new Request.Builder().url("http://127.0.0.1:1/").build();

  @AfterEach
  void tearDown() {
    scheduler.shutdownNow();
  }

  private Call watch(Duration deadline) {
    OperationContext op = Operation.newContext(client, request, null, false, deadline, false);
    Call call = client.okHttpClientForOperations().newCall(request);
    call.tag(OperationContext.class, () -> op);
    watchdog.watch(op, call);
    return call;
  }

  @Test
  void cancelsAtTheDeadlineForgetsWhatIsDoneAndStopsWhenIdle() {
    assertThat(watchdog.isRunning()).isFalse();
    Call longCall = watch(Duration.ofSeconds(30));
    assertThat(watchdog.isRunning()).isTrue();
    assertThat(scheduler.delaysNanos).first().isEqualTo(0L); // the first sweep, at once
    // Ticks follow, no further apart than TICK_NANOS.
    await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.delaysNanos.size() >= 3);
    assertThat(List.copyOf(scheduler.delaysNanos).subList(1, 3))
        .allSatisfy(d -> assertThat(d).isBetween(0L, DeadlineWatchdog.TICK_NANOS));

    Call shortCall = watch(Duration.ofMillis(300));
    await().atMost(Duration.ofSeconds(5)).until(shortCall::isCanceled);
    assertThat(longCall.isCanceled()).isFalse();
    assertThat(watchdog.watchedCount()).isEqualTo(1);

    // An async operation's earlier attempt ends while the operation goes on: not forgotten.
    watchdog.listener().callEnd(longCall);
    await().pollDelay(Duration.ofMillis(50)).atMost(Duration.ofSeconds(1)).until(() -> true);
    assertThat(watchdog.watchedCount()).isEqualTo(1);

    // The operation ended, and OkHttp reports its call done (its body was read): it is forgotten,
    // not cancelled.
    longCall.tag(OperationContext.class).end();
    watchdog.listener().callEnd(longCall);
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.watchedCount() == 0);
    assertThat(longCall.isCanceled()).isFalse();

    // With nothing watched for IDLE_NANOS (1 s), the sweeps stop: nothing is scheduled any more.
    await().atMost(Duration.ofSeconds(5)).until(() -> !watchdog.isRunning());
    int scheduled = scheduler.delaysNanos.size();
    await().pollDelay(Duration.ofMillis(100)).atMost(Duration.ofSeconds(1))
        .until(() -> scheduler.getQueue().isEmpty());
    assertThat(scheduler.delaysNanos).hasSize(scheduled);

    // And they start again with the next operation.
    Call again = watch(Duration.ofMillis(200));
    assertThat(watchdog.isRunning()).isTrue();
    await().atMost(Duration.ofSeconds(5)).until(again::isCanceled);
  }

  @Test
  void anOperationDueBeforeTheNextTickSchedulesItsOwnSweep() {
    watch(Duration.ofSeconds(30));
    // Wait for a tick to have run (it sets the time of the next one).
    await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.delaysNanos.size() >= 2);
    for (int tries = 0; ; tries++) {
      int before = scheduler.delaysNanos.size();
      long nextTick = watchdog.nextSweepNanos();
      // Due in 1 µs: before the next tick, unless that tick is already overdue (a loaded machine).
      Call soon = watch(Duration.ofNanos(1_000));
      boolean dueFirst = System.nanoTime() + 1_000 - nextTick < 0 && watchdog.nextSweepNanos() == nextTick;
      if (!dueFirst && tries < 20) {
        continue;
      }
      assertThat(dueFirst).as("a tick was overdue 20 times in a row").isTrue();
      // Scheduled by watch() itself, before it returned: not left to the next tick.
      List<Long> all = List.copyOf(scheduler.delaysNanos);
      assertThat(all.subList(before, all.size())).as("all delays %s, before %d", all, before)
          .anySatisfy(d -> assertThat(d).isLessThanOrEqualTo(1_000L));
      await().atMost(Duration.ofSeconds(5)).until(soon::isCanceled);
      return;
    }
  }

  @Test
  void aCallThatFailedIsForgottenWithoutBeingCancelled() {
    Call call = watch(Duration.ofMillis(300));
    call.tag(OperationContext.class).end();
    watchdog.listener().callFailed(call, new java.io.IOException("connection refused"));
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.watchedCount() == 0);
    await().pollDelay(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> true);
    assertThat(call.isCanceled()).isFalse();
  }

  @Test
  void aShutDownSchedulerLeavesOperationsRunningWithoutTheBackstop() {
    scheduler.shutdown();
    Call first = watch(Duration.ofMillis(1));
    assertThat(watchdog.isRunning()).isFalse(); // refused, so it can try again next time
    Call second = watch(Duration.ofMillis(1));
    assertThat(watchdog.isRunning()).isFalse();
    assertThat(first.isCanceled()).isFalse();
    assertThat(second.isCanceled()).isFalse();
  }

  /** A real scheduler that records the delay of every task it is given, in nanoseconds. */
  static final class RecordingScheduler extends ScheduledThreadPoolExecutor {
    final List<Long> delaysNanos = new CopyOnWriteArrayList<>();

    RecordingScheduler() {
      super(1);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      delaysNanos.add(unit.toNanos(delay));
      return super.schedule(command, delay, unit);
    }
  }
}

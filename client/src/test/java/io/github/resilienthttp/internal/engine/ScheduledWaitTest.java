package io.github.resilienthttp.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Exactly one party ends a scheduled wait: the timer, or whoever cuts it short. The case that
 * matters is a timer task already running: {@code ScheduledFuture.cancel(false)} returns true
 * then, and a caller taking that for "the task never runs" would run the next step a second time,
 * concurrently (the async driver's retry, a run's wait, the admission's pause).
 */
class ScheduledWaitTest {
  private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);

  @AfterEach
  void shutDown() {
    scheduler.shutdownNow();
  }

  @Test
  void aWaitWhoseTaskIsRunningIsNotCutShort() throws InterruptedException {
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    ScheduledWait wait = ScheduledWait.schedule(scheduler, () -> {
      runs.incrementAndGet();
      running.countDown();
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, 0);
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

    assertThat(wait.cutShort()).as("the timer's task is running: it ended the wait").isFalse();
    release.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.getCompletedTaskCount() == 1);
    assertThat(runs).hasValue(1);
  }

  @Test
  void aWaitCutShortNeverRunsItsTaskAndLeavesNoTimerQueued() {
    scheduler.setRemoveOnCancelPolicy(true);
    AtomicInteger runs = new AtomicInteger();
    // An hour: the timer cannot fire first however slow the machine is.
    ScheduledWait wait = ScheduledWait.schedule(scheduler, runs::incrementAndGet,
        TimeUnit.HOURS.toNanos(1));
    assertThat(scheduler.getQueue()).hasSize(1);

    assertThat(wait.cutShort()).isTrue();
    assertThat(scheduler.getQueue()).as("the timer was cancelled").isEmpty();
    assertThat(wait.cutShort()).as("once only").isFalse();
    assertThat(runs).hasValue(0);
  }

  /**
   * A wait can be published before it is armed (a run's wait between polls, whose zero-delay timer
   * may fire at once): cut short before, it schedules nothing when armed.
   */
  @Test
  void aWaitCutShortBeforeItIsArmedSchedulesNothing() {
    AtomicInteger runs = new AtomicInteger();
    ScheduledWait wait = ScheduledWait.of(runs::incrementAndGet);
    assertThat(wait.cutShort()).isTrue();
    wait.arm(scheduler, 0);
    assertThat(scheduler.getTaskCount()).as("no timer armed").isZero();
    assertThat(runs).hasValue(0);
  }

  @Test
  void aWaitArmedAfterItWasPublishedRunsOnce() {
    AtomicInteger runs = new AtomicInteger();
    ScheduledWait wait = ScheduledWait.of(runs::incrementAndGet);
    wait.arm(scheduler, 0);
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
    assertThat(wait.cutShort()).isFalse();
    assertThat(runs).hasValue(1);
  }

  @Test
  void aWaitThatEndedByItselfIsNotCutShort() {
    AtomicInteger runs = new AtomicInteger();
    ScheduledWait wait = ScheduledWait.schedule(scheduler, runs::incrementAndGet, 0);
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
    assertThat(wait.cutShort()).isFalse();
  }
}

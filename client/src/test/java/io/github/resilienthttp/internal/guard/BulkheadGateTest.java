package io.github.resilienthttp.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bulkhead gate's queue: FIFO for sync and async waiters, no recursion, no lost permit. */
@Timeout(30)
class BulkheadGateTest {
  static final long LONG_WAIT = TimeUnit.SECONDS.toNanos(30);
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void tearDown() {
    scheduler.shutdownNow();
  }

  static BulkheadGate gate(int permits, Duration maxWait) {
    return new BulkheadGate("test", BulkheadConfig.custom().maxConcurrentCalls(permits)
        .maxWaitDuration(maxWait).build());
  }

  static int available(BulkheadGate gate) {
    return gate.bulkhead().getMetrics().getAvailableConcurrentCalls();
  }

  @Test
  void twoThousandWaitersWhoseContinuationsReleaseAtOnceDoNotRecurse() {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    AtomicInteger servedAndReleased = new AtomicInteger();
    List<CompletableFuture<Boolean>> waits = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      CompletableFuture<Boolean> w = gate.acquireAsync(LONG_WAIT, scheduler);
      // What a cancelled operation's continuation does: it was granted, but gives the permit back
      // at once, on the releasing thread's stack.
      w.thenAccept(granted -> {
        if (granted) {
          servedAndReleased.incrementAndGet();
          gate.release();
        }
      });
      waits.add(w);
    }
    assertThat(gate.queued()).isEqualTo(2_000);
    gate.release();
    assertThat(servedAndReleased.get()).isEqualTo(2_000);
    assertThat(waits).allSatisfy(w -> assertThat(w.join()).isTrue());
    assertThat(available(gate)).isEqualTo(1);
    assertThat(gate.queued()).isZero();
  }

  @Test
  void waitersThatGaveUpLeaveTheQueueAndEveryPermitComesBack() {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    List<CompletableFuture<Boolean>> waits = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      waits.add(gate.acquireAsync(LONG_WAIT, scheduler));
    }
    waits.forEach(gate::giveUp);
    assertThat(gate.queued()).isZero();
    assertThat(waits).allSatisfy(w -> assertThat(w.join()).isFalse());
    gate.release();
    assertThat(available(gate)).isEqualTo(1);
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
  }

  /**
   * Under overload every queued operation gives up, newest first as often as not. Giving up must not
   * search the queue: 200,000 waiters that give up newest-first take a few hundred milliseconds
   * with O(1) give-ups, and minutes with a search per waiter (2 × 10^10 steps), far past the
   * timeout. The queue is empty afterwards, and the permit goes to the next live waiter.
   */
  @Test
  @Timeout(20)
  void waitersThatGiveUpNewestFirstCostLinearTimeAndLeaveNothingBehind() {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    int n = 200_000;
    List<CompletableFuture<Boolean>> waits = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      waits.add(gate.acquireAsync(LONG_WAIT, scheduler));
    }
    CompletableFuture<Boolean> oldest = waits.get(0);
    for (int i = n - 1; i >= 1; i--) {
      gate.giveUp(waits.get(i));
      if (i % 10_000 == 0) { // queued() walks the queue: only now and then
        assertThat(gate.queued()).isLessThanOrEqualTo(2 * i + 16); // the dead never outnumber the live
      }
    }
    assertThat(gate.queued()).isBetween(1, 1 + 16); // the live one, and a few dead ones not yet swept
    assertThat(oldest).isNotDone();
    gate.release();
    assertThat(oldest.join()).isTrue();
    assertThat(gate.queued()).isZero(); // the drain dropped the dead ones behind it
    gate.release();
    assertThat(available(gate)).isEqualTo(1);
  }

  /**
   * A waiter served in turn leaves the queue's count of give-ups as it was, so the waiters that
   * give up after a thousand were served are still swept once they are half the queue.
   */
  @Test
  void waitersServedBeforeDoNotDelayTheSweepOfThoseThatGiveUp() {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    for (int i = 0; i < 1_000; i++) {
      CompletableFuture<Boolean> next = gate.acquireAsync(LONG_WAIT, scheduler);
      assertThat(next).isNotDone();
      gate.release(); // the permit goes to the queued waiter, which holds it until the next round
      assertThat(next.join()).isTrue();
    }
    assertThat(gate.queued()).isZero();
    int n = 1_000;
    List<CompletableFuture<Boolean>> waits = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      waits.add(gate.acquireAsync(LONG_WAIT, scheduler));
    }
    for (int i = n - 1; i >= 1; i--) {
      gate.giveUp(waits.get(i));
    }
    assertThat(gate.queued()).isBetween(1, 1 + 16); // the live one, and a few dead ones not yet swept
    gate.release();
    assertThat(waits.get(0).join()).isTrue();
    assertThat(gate.queued()).isZero();
    gate.release();
    assertThat(available(gate)).isEqualTo(1);
  }

  @Test
  void syncAndAsyncWaitersAreServedInArrivalOrder() throws Exception {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    List<String> served = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      String name = (i % 2 == 0 ? "sync-" : "async-") + i;
      if (i % 2 == 0) {
        Thread t = new Thread(() -> {
          try {
            if (gate.acquire(LONG_WAIT, CompletableFuture::new)) {
              served.add(name);
              gate.release();
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
        t.start();
        threads.add(t);
        int queued = i + 1;
        await().atMost(Duration.ofSeconds(5)).until(() -> gate.queued() == queued);
      } else {
        gate.acquireAsync(LONG_WAIT, scheduler).thenAccept(granted -> {
          served.add(name);
          gate.release();
        });
      }
    }
    assertThat(gate.queued()).isEqualTo(6);
    gate.release();
    for (Thread t : threads) {
      t.join(5_000);
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> served.size() == 6);
    assertThat(served).containsExactly("sync-0", "async-1", "sync-2", "async-3", "sync-4", "async-5");
    assertThat(available(gate)).isEqualTo(1);
  }

  @Test
  void aNewcomerDoesNotOvertakeAQueuedWaiter() {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    CompletableFuture<Boolean> first = gate.acquireAsync(LONG_WAIT, scheduler);
    gate.bulkhead().onComplete(); // a permit frees without the gate's drain (as if by a race)
    CompletableFuture<Boolean> newcomer = gate.acquireAsync(LONG_WAIT, scheduler);
    assertThat(first.join()).isTrue();
    assertThat(newcomer).isNotDone();
    gate.release();
    assertThat(newcomer.join()).isTrue();
  }

  /**
   * The blocking wait: a free permit is taken at once; with none free, no time left means no wait,
   * and a wait that runs out gives up its place and holds no permit.
   */
  @Test
  void aBlockingWaitTakesAFreePermitAndGivesUpWhenItsTimeRunsOut() throws Exception {
    BulkheadGate gate = gate(1, Duration.ofMillis(50));
    assertThat(gate.acquire(LONG_WAIT, CompletableFuture::new)).isTrue();
    assertThat(available(gate)).isZero();
    assertThat(gate.acquire(0, CompletableFuture::new)).as("no time left").isFalse();
    assertThat(gate.queued()).isZero();
    assertThat(gate.acquire(LONG_WAIT, CompletableFuture::new)).as("50 ms, none free").isFalse();
    assertThat(gate.queued()).isZero();
    gate.release();
    assertThat(available(gate)).isEqualTo(1);
  }

  @Test
  void aBlockedWaiterWakesAtOnceWhenItsOperationIsCancelled() throws Exception {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    CompletableFuture<Void> cancel = new CompletableFuture<>();
    CompletableFuture<Boolean> result = new CompletableFuture<>();
    Thread waiter = new Thread(() -> {
      try {
        result.complete(gate.acquire(LONG_WAIT, () -> cancel));
      } catch (InterruptedException e) {
        result.completeExceptionally(e);
      }
    });
    waiter.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> gate.queued() == 1);
    long start = System.nanoTime();
    cancel.complete(null);
    assertThat(result.get(5, TimeUnit.SECONDS)).isFalse();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000);
    assertThat(gate.queued()).isZero();
    gate.release();
    assertThat(available(gate)).isEqualTo(1);
  }

  @Test
  void anInterruptedWaiterHoldsNoPermit() throws Exception {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread waiter = new Thread(() -> {
      try {
        gate.acquire(LONG_WAIT, CompletableFuture::new);
        thrown.complete(null);
      } catch (InterruptedException e) {
        thrown.complete(e);
      }
    });
    waiter.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> gate.queued() == 1);
    waiter.interrupt();
    assertThat(thrown.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    gate.release();
    assertThat(available(gate)).isEqualTo(1);
  }

  @Test
  void aShutDownSchedulerFailsTheWaitWithoutHoldingAPermit() {
    BulkheadGate gate = gate(1, Duration.ofSeconds(30));
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
    ScheduledExecutorService dead = Executors.newSingleThreadScheduledExecutor();
    dead.shutdown();
    CompletableFuture<Boolean> w = gate.acquireAsync(LONG_WAIT, dead);
    assertThat(w).isCompletedExceptionally();
    assertThat(gate.queued()).isZero();
    gate.release();
    assertThat(available(gate)).isEqualTo(1);
  }

  /**
   * A rejected wait is reported as cut by the deadline only when the deadline left less than the
   * bulkhead's own maximum wait.
   */
  @Test
  void aWaitIsCutByTheDeadlineOnlyWhenItWasShorterThanTheBulkheadsMaximum() {
    BulkheadGate gate = gate(1, Duration.ofMillis(200));
    long max = Duration.ofMillis(200).toNanos();
    assertThat(gate.cutByDeadline(max - 1)).isTrue();
    assertThat(gate.cutByDeadline(max)).isFalse();
    assertThat(gate.cutByDeadline(LONG_WAIT)).isFalse();
  }

  @Test
  void aWaitOfCenturiesIsAccepted() {
    BulkheadGate gate = gate(1, Duration.ofDays(365L * 300));
    assertThat(gate.cutByDeadline(LONG_WAIT)).isTrue();
    assertThat(gate.acquireAsync(LONG_WAIT, scheduler).join()).isTrue();
  }
}

package io.github.resilienthttp.internal.guard;

import static io.github.resilienthttp.internal.guard.BulkheadGateTest.LONG_WAIT;
import static io.github.resilienthttp.internal.guard.BulkheadGateTest.available;
import static io.github.resilienthttp.internal.guard.BulkheadGateTest.gate;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bulkhead gate's races, which no single-threaded test can place, run many thousand times so
 * that they happen: a permit freed between a newcomer's failed try and its place in the queue, and
 * a permit granted to a waiter just as its wait runs out or it is interrupted. Each test fails
 * within seconds when the gate's handling of its race is removed (checked by hand: see
 * docs/project-layout.md, "Mutation testing").
 */
@Timeout(60)
class BulkheadGateRaceTest {
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void tearDown() {
    scheduler.shutdownNow();
  }

  /** Holds the thread for {@code nanos} without parking: a sleep would be far coarser. */
  private static void spin(long nanos) {
    long until = System.nanoTime() + nanos;
    while (System.nanoTime() - until < 0) {
      Thread.onSpinWait();
    }
  }

  /** What one caller does in a loop; returns whether the permit was granted. */
  private interface Acquire {
    boolean get() throws Exception;
  }

  /**
   * Runs {@code callers} threads, each {@code rounds} times: acquire, hold for a random spin of up
   * to {@code maxHoldNanos} (seeded per thread), release when granted.
   *
   * @return how many acquires were refused
   */
  private static int run(int callers, int rounds, long maxHoldNanos, BulkheadGate gate,
      Acquire acquire) throws Exception {
    AtomicInteger refused = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      SplittableRandom random = new SplittableRandom(42 + c);
      Thread t = new Thread(() -> {
        try {
          start.await();
          for (int i = 0; i < rounds; i++) {
            if (!acquire.get()) {
              refused.incrementAndGet();
              continue;
            }
            spin(maxHoldNanos == 0 ? 0 : random.nextLong(maxHoldNanos));
            gate.release();
          }
        } catch (Throwable e) { // NOPMD: reported to the test thread below
          failure.compareAndSet(null, e);
        }
      }, "caller-" + c);
      t.start();
      threads.add(t);
    }
    start.countDown();
    for (Thread t : threads) {
      t.join();
    }
    assertThat(failure.get()).isNull();
    return refused.get();
  }

  /**
   * Two callers take turns on one permit with no hold: one caller's release often comes after the
   * other's failed try and before it is queued, when the release sees nobody waiting. The newcomer
   * must look again once queued. Otherwise both callers soon wait out the full 5 s and are refused
   * while the permit is free.
   */
  @Test
  void aPermitFreedAsABlockingWaiterJoinsTheQueueIsHandedToIt() throws Exception {
    assertEveryTurnIsServed(400_000, gate -> () -> gate.acquire(LONG_WAIT, CompletableFuture::new));
  }

  /** The same race for {@code acquireAsync}: its waiter is queued after its timeout is scheduled. */
  @Test
  void aPermitFreedAsAnAsyncWaiterJoinsTheQueueIsHandedToIt() throws Exception {
    assertEveryTurnIsServed(200_000, gate -> () -> gate.acquireAsync(LONG_WAIT, scheduler).join());
  }

  /**
   * Two callers take {@code rounds} turns each on one permit that may wait 5 s, holding it up to
   * 500 ns: none is refused, and the permit and the queue end as they began.
   */
  private static void assertEveryTurnIsServed(int rounds, Function<BulkheadGate, Acquire> acquireOn)
      throws Exception {
    BulkheadGate gate = gate(1, Duration.ofSeconds(5));
    int refused = run(2, rounds, 500, gate, acquireOn.apply(gate));
    assertThat(refused).isZero();
    assertThat(available(gate)).isEqualTo(1);
    assertThat(gate.queued()).isZero();
  }

  /**
   * Four callers on one permit, each waiting at most 100 µs and holding it up to 200 µs: waits run
   * out all the time, and now and then a release grants the permit to a waiter whose wait has just
   * run out. That waiter must keep it (and release it). Had it dropped it, the permit would be lost
   * for good and every later acquire refused.
   */
  @Test
  void aPermitGrantedJustAsABlockingWaitRunsOutIsKeptAndGivenBack() throws Exception {
    BulkheadGate gate = gate(1, Duration.ofNanos(100_000));
    int refused = run(4, 5_000, 200_000, gate, () -> gate.acquire(LONG_WAIT, CompletableFuture::new));
    assertThat(refused).as("waits ran out, so the race was run").isPositive();
    assertThat(available(gate)).as("no permit lost").isEqualTo(1);
    assertThat(gate.acquire(LONG_WAIT, CompletableFuture::new)).isTrue();
  }

  /**
   * Three callers on one permit, and a fourth thread that interrupts one of them every few
   * microseconds: now and then a release grants the permit to a waiter just as it is interrupted.
   * The waiter throws {@code InterruptedException}, and must first give back the permit it was
   * granted (nobody else will). Had it kept it, the permit would be lost for good.
   */
  @Test
  void aPermitGrantedJustAsABlockingWaiterIsInterruptedIsGivenBack() throws Exception {
    BulkheadGate gate = gate(1, Duration.ofMillis(20));
    int rounds = 20_000;
    AtomicInteger interrupted = new AtomicInteger();
    AtomicInteger granted = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> callers = new ArrayList<>();
    for (int c = 0; c < 3; c++) {
      SplittableRandom random = new SplittableRandom(7 + c);
      callers.add(new Thread(() -> {
        for (int i = 0; i < rounds; i++) {
          try {
            if (gate.acquire(LONG_WAIT, CompletableFuture::new)) {
              granted.incrementAndGet();
              spin(random.nextLong(20_000));
              gate.release();
            }
          } catch (InterruptedException e) {
            interrupted.incrementAndGet();
          } catch (Throwable e) { // NOPMD: reported to the test thread below
            failure.compareAndSet(null, e);
            return;
          }
        }
      }, "caller-" + c));
    }
    AtomicBoolean stop = new AtomicBoolean();
    Thread interrupter = new Thread(() -> {
      SplittableRandom random = new SplittableRandom(99);
      while (!stop.get()) {
        callers.get(random.nextInt(callers.size())).interrupt();
        spin(random.nextLong(10_000));
      }
    }, "interrupter");
    callers.forEach(Thread::start);
    interrupter.start();
    for (Thread t : callers) {
      t.join();
    }
    stop.set(true);
    interrupter.join();
    assertThat(failure.get()).isNull();
    assertThat(interrupted.get()).as("waits were interrupted, so the race was run").isPositive();
    assertThat(granted.get()).isPositive();
    assertThat(available(gate)).as("no permit lost").isEqualTo(1);
    assertThat(gate.acquire(LONG_WAIT, CompletableFuture::new)).isTrue();
  }
}

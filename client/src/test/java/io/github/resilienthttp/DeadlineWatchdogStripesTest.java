package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.resilienthttp.internal.deadline.DeadlineWatchdog;
import io.github.resilienthttp.internal.engine.Execution;
import io.github.resilienthttp.internal.engine.Run;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Test;

/**
 * The watchdog's joining stacks are striped by caller thread: callers spread over every stripe, and
 * a sweep takes what joined on each of them. Operations here are defined, never started, and join
 * the watchdog directly; with no call to stop, an operation whose deadline passed is simply
 * unlinked and no longer watched.
 */
class DeadlineWatchdogStripesTest {
  private final ResilientHttpClient client = ResilientHttpClient.wrap(new OkHttpClient()).build();
  private final Request request = new Request.Builder().url("http://127.0.0.1:1/").build();

  private Execution defined(Duration deadline) {
    Run op = new Run(client.runtime());
    op.define(request, null, false, deadline, null, null);
    return op;
  }

  @Test
  void theStripesAreAPowerOfTwoFromOneToTheCap() {
    assertThat(new DeadlineWatchdog(0).stripes()).isEqualTo(1);
    assertThat(new DeadlineWatchdog(1).stripes()).isEqualTo(1);
    assertThat(new DeadlineWatchdog(5).stripes()).isEqualTo(8);
    assertThat(new DeadlineWatchdog(8).stripes()).isEqualTo(8);
    assertThat(new DeadlineWatchdog(9).stripes()).isEqualTo(16);
    assertThat(new DeadlineWatchdog(1_000).stripes()).isEqualTo(DeadlineWatchdog.MAX_STRIPES);
    // The default does not depend on the cores: what a stripe saves depends on the callers.
    assertThat(new DeadlineWatchdog().stripes()).isEqualTo(DeadlineWatchdog.MAX_STRIPES);
    assertThat(client.runtime().deadlineWatchdog().stripes())
        .isEqualTo(DeadlineWatchdog.MAX_STRIPES);
  }

  /**
   * With the client's own watchdog, 64 caller threads each have a stack, so each one's done
   * operation is taken off its stack by its next one: however many operations they run, only
   * their last ones are watched (and one each that a sweep took in flight), and no sweep has a pile
   * to walk. (On eight stripes, 16 callers pushed onto each other's operations in flight, and
   * every sweep walked what had piled up.)
   */
  @Test
  void callersAloneOnTheirStripesLeaveOnlyTheirLastOperationWatched() throws InterruptedException {
    DeadlineWatchdog watchdog = client.runtime().deadlineWatchdog();
    int perCaller = 50;
    List<List<Execution>> opsByCaller = new ArrayList<>();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = threadsOnEveryStripe(watchdog, 1, i -> {
      List<Execution> mine = new ArrayList<>();
      for (int k = 0; k < perCaller; k++) {
        mine.add(defined(Duration.ofSeconds(30)));
      }
      opsByCaller.add(mine);
      return () -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        for (Execution op : mine) {
          watchdog.watch(op);
          op.endWithoutResponse(); // done: nothing is left to read
        }
      };
    });
    assertThat(threads).hasSize(DeadlineWatchdog.MAX_STRIPES);
    for (Thread t : threads) {
      t.start();
    }
    go.countDown();
    for (Thread t : threads) {
      t.join();
    }
    // A sweep that ran during the loop may have taken a caller's operation off its stack between
    // its join and its end, and keeps it until the next sweep finds it done: at most one per
    // caller at any time, seen in a snapshot taken under the sweep's lock. Without the replacing,
    // a caller's 49 earlier operations would be watched until a sweep.
    Set<Execution> watchedNow = new HashSet<>(watchdog.watchedOperations());
    assertThat(watchedNow).hasSizeLessThanOrEqualTo(2 * threads.size());
    for (List<Execution> mine : opsByCaller) {
      assertThat(mine.subList(0, perCaller - 1).stream().filter(watchedNow::contains).count())
          .as("earlier operations of one caller still watched").isLessThanOrEqualTo(1);
    }
  }

  @Test
  void aThreadJoinsTheStripeItsIdPicks() {
    DeadlineWatchdog watchdog = new DeadlineWatchdog(8);
    for (int i = 0; i < 32; i++) {
      Thread t = new Thread(() -> { });
      assertThat(watchdog.stripeOf(t)).isEqualTo((int) (t.getId() & 7));
    }
    assertThat(watchdog.stripeOf(Thread.currentThread()))
        .isEqualTo(watchdog.stripeOf(Thread.currentThread()));
  }

  /**
   * New threads, {@code perStripe} on each of the watchdog's stripes (thread IDs are handed out in
   * sequence, but other threads of the JVM take some: made until each stripe has its share).
   */
  private static List<Thread> threadsOnEveryStripe(DeadlineWatchdog watchdog, int perStripe,
      java.util.function.Function<Integer, Runnable> task) {
    int[] count = new int[watchdog.stripes()];
    List<Thread> threads = new ArrayList<>();
    for (int made = 0; threads.size() < perStripe * count.length; made++) {
      assertThat(made).as("threads made to cover the stripes").isLessThan(10_000);
      Runnable[] body = new Runnable[1]; // set before the thread starts, only if it is kept
      Thread t = new Thread(() -> body[0].run());
      int stripe = watchdog.stripeOf(t);
      if (count[stripe] < perStripe) {
        count[stripe]++;
        body[0] = task.apply(threads.size());
        threads.add(t);
      }
    }
    return threads;
  }

  @Test
  void operationsJoinedOnEveryStripeAreAllSweptAtTheirDeadline() throws InterruptedException {
    DeadlineWatchdog watchdog = new DeadlineWatchdog(8);
    List<Execution> ops = new CopyOnWriteArrayList<>();
    List<Thread> threads = threadsOnEveryStripe(watchdog, 2, i -> {
      Execution op = defined(Duration.ofMillis(300 + 10L * i));
      return () -> {
        watchdog.watch(op);
        ops.add(op);
      };
    });
    Set<Integer> stripesUsed = new HashSet<>();
    for (Thread t : threads) {
      stripesUsed.add(watchdog.stripeOf(t));
    }
    for (Thread t : threads) {
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(stripesUsed).hasSize(8);
    assertThat(watchdog.watchedCount()).isEqualTo(16);
    assertThat(watchdog.watchedOperations()).containsExactlyInAnyOrderElementsOf(ops);
    assertThat(ops).allMatch(Execution::isWatched);
    assertThat(watchdog.isRunning()).isTrue();

    // Every stripe is swept: each operation is dropped at its deadline, none is left behind.
    await().atMost(Duration.ofSeconds(5)).until(() -> watchdog.watchedCount() == 0);
    assertThat(ops).noneMatch(Execution::isWatched);
    // ... and with nothing left to watch, the sweeps stop.
    await().atMost(Duration.ofSeconds(5)).until(() -> !watchdog.isRunning());
  }

  @Test
  void aJoinOnAnyStripeAfterTheSweepsStoppedStartsThemAgain() throws InterruptedException {
    DeadlineWatchdog watchdog = new DeadlineWatchdog(8);
    // Two threads on two stripes (the sweeps stop 1 s after the last operation).
    List<Execution> ops = new ArrayList<>();
    List<Thread> threads = threadsOnEveryStripe(watchdog, 1, i -> {
      Execution op = defined(Duration.ofMillis(50));
      ops.add(op);
      return () -> watchdog.watch(op);
    });
    for (int i = 0; i < 2; i++) {
      Execution op = ops.get(i);
      Thread t = threads.get(i);
      t.start();
      t.join();
      assertThat(watchdog.isRunning()).isTrue();
      await().atMost(Duration.ofSeconds(5)).until(() -> !op.isWatched());
      await().atMost(Duration.ofSeconds(5)).until(() -> !watchdog.isRunning());
    }
  }

  /**
   * An operation that joins while a sweep is stopping the sweeps (it found nothing to watch for a
   * second) is still swept: the joining caller saw the sweeps running and armed nothing, so the
   * stopping sweep must see the operation after it cleared the flag, and go on.
   */
  @Test
  void anOperationJoiningWhileTheSweepsStopIsStillSwept() throws InterruptedException {
    DeadlineWatchdog watchdog = new DeadlineWatchdog(8);
    CountDownLatch stopping = new CountDownLatch(1);
    CountDownLatch joined = new CountDownLatch(1);
    watchdog.beforeIdleStopForTests(() -> {
      if (stopping.getCount() > 0) {
        stopping.countDown();
        try {
          joined.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    Execution first = defined(Duration.ofMillis(20));
    watchdog.watch(first);
    assertThat(stopping.await(10, TimeUnit.SECONDS)).as("the sweeps went idle").isTrue();
    assertThat(first.isWatched()).isFalse();
    assertThat(watchdog.isRunning()).isTrue();

    Execution late = defined(Duration.ofMillis(100));
    // A joiner on the last stripe: a scan of the stripes that stopped one short would miss it.
    Thread joiner;
    do {
      joiner = new Thread(() -> watchdog.watch(late));
    } while (watchdog.stripeOf(joiner) != watchdog.stripes() - 1);
    joiner.start();
    joiner.join();
    assertThat(late.isWatched()).isTrue();
    joined.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> !late.isWatched());
    assertThat(watchdog.watchedCount()).isZero();
    await().atMost(Duration.ofSeconds(5)).until(() -> !watchdog.isRunning());
  }
}

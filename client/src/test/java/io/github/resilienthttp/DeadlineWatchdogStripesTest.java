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
    assertThat(new DeadlineWatchdog().stripes())
        .isEqualTo(Math.min(DeadlineWatchdog.MAX_STRIPES,
            Integer.highestOneBit(Runtime.getRuntime().availableProcessors() * 8 - 1)));
  }

  @Test
  void threadsStartedOneAfterAnotherJoinDifferentStripes() {
    DeadlineWatchdog watchdog = new DeadlineWatchdog(8);
    Set<Integer> stripes = new HashSet<>();
    for (int i = 0; i < 8; i++) {
      stripes.add(watchdog.stripeOf(new Thread(() -> { })));
    }
    // Thread IDs are handed out in sequence: eight new threads cover the eight stripes.
    assertThat(stripes).hasSize(8);
    assertThat(watchdog.stripeOf(Thread.currentThread()))
        .isEqualTo(watchdog.stripeOf(Thread.currentThread()));
  }

  @Test
  void operationsJoinedOnEveryStripeAreAllSweptAtTheirDeadline() throws InterruptedException {
    DeadlineWatchdog watchdog = new DeadlineWatchdog(8);
    List<Execution> ops = new CopyOnWriteArrayList<>();
    Set<Integer> stripesUsed = new HashSet<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      Execution op = defined(Duration.ofMillis(300 + 10L * i));
      Thread t = new Thread(() -> {
        watchdog.watch(op);
        ops.add(op);
      });
      stripesUsed.add(watchdog.stripeOf(t));
      threads.add(t);
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
    // Two threads started one after the other: two stripes (the sweeps stop 1 s after the last).
    for (int i = 0; i < 2; i++) {
      Execution op = defined(Duration.ofMillis(50));
      Thread t = new Thread(() -> watchdog.watch(op));
      t.start();
      t.join();
      assertThat(watchdog.isRunning()).isTrue();
      await().atMost(Duration.ofSeconds(5)).until(() -> !op.isWatched());
      await().atMost(Duration.ofSeconds(5)).until(() -> !watchdog.isRunning());
    }
  }
}

package io.github.resilienthttp.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import okhttp3.HttpUrl;
import org.awaitility.Awaitility;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class TargetCircuitBreakersTest {
  private static HttpUrl url(int i) {
    return HttpUrl.get("https://tenant-" + i + ".example/");
  }

  @Test
  void theNumberOfTargetsIsBoundedAndTheLeastRecentlyUsedIsEvicted() {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
    TargetCircuitBreakers breakers = TargetCircuitBreakers.perTarget(registry, 100);
    TargetCircuitBreakers.Target hot = breakers.forUrl(url(0));
    for (int i = 1; i < 2_000; i++) {
      breakers.forUrl(url(i));
      breakers.forUrl(url(0)); // target 0 stays in use
    }
    assertThat(breakers.size()).isEqualTo(100);
    assertThat(registry.getAllCircuitBreakers()).hasSize(100);
    assertThat(breakers.forUrl(url(0))).isSameAs(hot);
    assertThat(registry.find("https://tenant-1999.example:443")).isPresent();
    assertThat(registry.find("https://tenant-1.example:443")).isEmpty();
  }

  @Test
  void theDefaultBoundIsDocumented() {
    assertThat(TargetCircuitBreakers.MAX_TARGETS).isEqualTo(1024);
  }

  /**
   * A lookup that found its target in the map just before another thread evicted it does not hand
   * the evicted target out, nor remember it for the next operations: it looks again and gets the
   * name's new target, whose breaker is the registry's.
   */
  @Test
  void aTargetEvictedBetweenTheLookupAndItsUseIsNotHandedOut() throws Exception {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
    TargetCircuitBreakers breakers = TargetCircuitBreakers.perTarget(registry, 2);
    TargetCircuitBreakers.Target first = breakers.forUrl(url(1));
    breakers.forUrl(url(2)); // the fast path now remembers target 2; target 1 is the oldest
    Pause found = new Pause("looker");
    breakers.afterLookupForTests(found);
    AtomicReference<TargetCircuitBreakers.Target> got = new AtomicReference<>();
    Thread looker = new Thread(() -> got.set(breakers.forUrl(url(1))), "looker");
    looker.start();
    found.awaitReached(); // the looker holds target 1, found in the map
    breakers.forUrl(url(3)); // a third target evicts the least recently used: target 1
    assertThat(registry.find(TargetCircuitBreakers.targetName(url(1)))).isEmpty();
    found.release();
    looker.join(10_000);

    assertThat(got.get()).isNotNull().isNotSameAs(first);
    assertThat(got.get().breaker())
        .isSameAs(registry.find(TargetCircuitBreakers.targetName(url(1))).orElseThrow());
    assertThat(breakers.last()).isSameAs(got.get());
    assertThat(breakers.forUrl(url(1))).isSameAs(got.get());
    assertThat(breakers.size()).isEqualTo(2);
    assertThat(registry.getAllCircuitBreakers()).hasSize(2);
  }

  /**
   * A target just added is the most recently used: an eviction by another thread, before the
   * target's first operation marks it, takes the oldest target instead.
   */
  @Test
  void aTargetJustAddedIsNotTakenForTheLeastRecentlyUsed() throws Exception {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
    List<String> added = new java.util.concurrent.CopyOnWriteArrayList<>();
    registry.getEventPublisher().onEntryAdded(e -> added.add(e.getAddedEntry().getName()));
    TargetCircuitBreakers breakers = TargetCircuitBreakers.perTarget(registry, 2);
    TargetCircuitBreakers.Target oldest = breakers.forUrl(url(1));
    Pause inMap = new Pause("adder");
    breakers.afterLookupForTests(inMap);
    AtomicReference<TargetCircuitBreakers.Target> got = new AtomicReference<>();
    Thread adder = new Thread(() -> got.set(breakers.forUrl(url(2))), "adder");
    adder.start();
    inMap.awaitReached(); // target 2 is in the map; its first operation has not marked it yet
    breakers.forUrl(url(3)); // over the bound: the least recently used goes
    inMap.release();
    adder.join(10_000);

    assertThat(registry.find(TargetCircuitBreakers.targetName(url(1)))).isEmpty();
    assertThat(breakers.inMap(oldest)).isFalse();
    TargetCircuitBreakers.Target two = breakers.targetNamed(TargetCircuitBreakers.targetName(url(2)));
    assertThat(got.get()).isNotNull().isSameAs(two);
    assertThat(registry.getAllCircuitBreakers()).hasSize(2);
    // Target 2 kept its first breaker: it was never evicted and made again.
    assertThat(added).containsExactly(TargetCircuitBreakers.targetName(url(1)),
        TargetCircuitBreakers.targetName(url(2)), TargetCircuitBreakers.targetName(url(3)));
  }

  /**
   * While the thread that evicted a target has not yet remembered its own, the fast path may still
   * remember the evicted one: an operation on it then looks it up again instead.
   */
  @Test
  void theFastPathPassesOverARememberedTargetOnceItIsEvicted() throws Exception {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
    TargetCircuitBreakers breakers = TargetCircuitBreakers.perTarget(registry, 1);
    TargetCircuitBreakers.Target first = breakers.forUrl(url(1));
    assertThat(breakers.last()).isSameAs(first);
    Pause evictedIt = new Pause("evictor");
    breakers.afterLookupForTests(evictedIt);
    Thread evictor = new Thread(() -> breakers.forUrl(url(2)), "evictor");
    evictor.start();
    evictedIt.awaitReached(); // target 1 is evicted; the fast path still remembers it
    assertThat(breakers.last()).isSameAs(first);
    assertThat(registry.find(TargetCircuitBreakers.targetName(url(1)))).isEmpty();

    TargetCircuitBreakers.Target again = breakers.forUrl(url(1));
    assertThat(again).isNotSameAs(first);
    assertThat(again.breaker())
        .isSameAs(registry.find(TargetCircuitBreakers.targetName(url(1))).orElseThrow());
    evictedIt.release();
    evictor.join(10_000);
    assertThat(evictor.isAlive()).isFalse();
    assertThat(breakers.size()).isEqualTo(1);
  }

  /**
   * A lookup that finds a target marked evicted, whose evicting thread has not yet taken it out of
   * the map, does not spin on it: it takes the target out itself and goes on (here it then waits,
   * parked, for the paused eviction's lock, to evict in turn).
   */
  @Test
  void aLookupDoesNotSpinOnATargetBeingEvicted() throws Exception {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();
    TargetCircuitBreakers breakers = TargetCircuitBreakers.perTarget(registry, 1);
    TargetCircuitBreakers.Target first = breakers.forUrl(url(1));
    Pause marked = new Pause("evictor");
    breakers.afterMarkForTests(marked);
    Thread evictor = new Thread(() -> breakers.forUrl(url(2)), "evictor");
    evictor.start();
    marked.awaitReached(); // target 1 is marked and still in the map
    assertThat(breakers.inMap(first)).isTrue();

    AtomicReference<TargetCircuitBreakers.Target> got = new AtomicReference<>();
    Thread looker = new Thread(() -> got.set(breakers.forUrl(url(1))), "looker");
    looker.start();
    // Parked on the paused eviction's lock, not spinning on the marked target.
    Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> looker.getState() == Thread.State.BLOCKED);
    assertThat(breakers.inMap(first)).isFalse();
    marked.release();
    evictor.join(10_000);
    looker.join(10_000);

    assertThat(got.get()).isNotNull().isNotSameAs(first);
    assertThat(breakers.size()).isEqualTo(1);
    assertThat(registry.getAllCircuitBreakers()).hasSize(1);
  }

  /**
   * A hook that holds one named thread the first time it runs there, until the test releases it.
   */
  private static final class Pause implements Runnable {
    private final String threadName;
    private final CountDownLatch reached = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    Pause(String threadName) {
      this.threadName = threadName;
    }

    @Override
    public void run() {
      if (Thread.currentThread().getName().equals(threadName) && reached.getCount() > 0) {
        reached.countDown();
        await(released);
      }
    }

    /** Waits until the named thread is held in the hook. */
    void awaitReached() {
      await(reached);
    }

    /** Lets the held thread go on. */
    void release() {
      released.countDown();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}

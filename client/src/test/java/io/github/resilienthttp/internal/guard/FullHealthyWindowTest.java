package io.github.resilienthttp.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.IllegalStateTransitionException;
import io.github.resilienthttp.ResilientHttpClient;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The breaker shortcut skips a fast success only where recording it changes nothing the breaker
 * shows: every figure equals that of a breaker that recorded every outcome, after every step of
 * any sequence; a failure is never hidden by a success skipped or marked beside it; a call recorded
 * outside the SDK is noticed at the next re-check; an event consumer, or a time-based window, turns
 * the shortcut off.
 */
class FullHealthyWindowTest {
  private static final long FAST = TimeUnit.MILLISECONDS.toNanos(3);
  private static final IOException BOOM = new IOException("boom");

  /**
   * A breaker that counts the successes recorded in it and the figures read from it, and runs hooks
   * inside {@code onError} and inside the next read of the buffered calls.
   */
  private static final class Counted {
    final CircuitBreaker real;
    final CircuitBreaker breaker;
    final AtomicInteger successes = new AtomicInteger();
    final AtomicInteger figureReads = new AtomicInteger();
    Runnable insideOnError = () -> { };
    Runnable insideNextBufferedRead;
    private CircuitBreaker.Metrics realMetrics;
    private CircuitBreaker.Metrics metrics;

    Counted(CircuitBreakerConfig config) {
      real = CircuitBreaker.of("target", config);
      breaker = (CircuitBreaker) Proxy.newProxyInstance(CircuitBreaker.class.getClassLoader(),
          new Class<?>[] {CircuitBreaker.class}, (proxy, method, args) -> {
            switch (method.getName()) {
              case "onSuccess" -> successes.incrementAndGet();
              case "onError" -> insideOnError.run();
              case "getMetrics" -> {
                return metrics();
              }
              default -> { }
            }
            return call(method, real, args);
          });
    }

    /** The same proxy for as long as the real breaker keeps its metrics object. */
    private synchronized CircuitBreaker.Metrics metrics() {
      CircuitBreaker.Metrics r = real.getMetrics();
      if (r != realMetrics) {
        realMetrics = r;
        metrics = (CircuitBreaker.Metrics) Proxy.newProxyInstance(
            CircuitBreaker.class.getClassLoader(), new Class<?>[] {CircuitBreaker.Metrics.class},
            (proxy, method, args) -> {
              figureReads.incrementAndGet();
              Runnable hook = insideNextBufferedRead;
              if (method.getName().equals("getNumberOfBufferedCalls") && hook != null) {
                insideNextBufferedRead = null;
                hook.run();
              }
              return call(method, r, args);
            });
      }
      return metrics;
    }

    private static Object call(java.lang.reflect.Method method, Object target, Object[] args)
        throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  /** 0, 1, 2, ...: checks at every 16th recorded success, re-checks at every 64th. */
  private static IntSupplier counting() {
    AtomicInteger i = new AtomicInteger();
    return i::getAndIncrement;
  }

  private static void fill(FullHealthyWindow window) {
    for (int i = 0; i < 200 && !window.isMarked(); i++) {
      window.onSuccess(FAST);
    }
    assertThat(window.isMarked()).isTrue();
  }

  @Test
  void aFastSuccessIsSkippedOnlyOnceTheWindowIsFullOfThem() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig()); // window of 50
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, counting());
    for (int i = 0; i < 64; i++) {
      window.onSuccess(FAST);
    }
    // 50 fill the window; the checks at samples 16, 32, 48 saw it not full yet.
    assertThat(window.isMarked()).isFalse();
    assertThat(b.successes).hasValue(64);
    window.onSuccess(FAST); // sample 64: a check, which finds the window full
    assertThat(window.isMarked()).isTrue();
    assertThat(b.successes).hasValue(65);

    for (int i = 0; i < 640; i++) {
      window.onSuccess(FAST);
    }
    // Samples 65..704: only 128, 192, ..., 704 (ten) are recorded, to re-check.
    assertThat(b.successes).hasValue(75);
    CircuitBreaker.Metrics m = b.real.getMetrics();
    assertThat(m.getNumberOfBufferedCalls()).isEqualTo(50);
    assertThat(m.getNumberOfSuccessfulCalls()).isEqualTo(50);
    assertThat(m.getNumberOfFailedCalls()).isZero();
    assertThat(window.isMarked()).isTrue();
  }

  /** A clock that counts its readings; each reading is {@code reading} on it. */
  private static final class CountingClock implements io.github.resilienthttp.TimeSource {
    final AtomicInteger reads = new AtomicInteger();
    volatile long reading = FAST;

    @Override
    public long nanoTime() {
      reads.incrementAndGet();
      return reading;
    }

    @Override
    public java.time.Instant now() {
      throw new UnsupportedOperationException();
    }

    @Override
    public void sleep(Duration duration) {
      throw new UnsupportedOperationException();
    }
  }

  @Test
  void aSuccessKnownFastIsSkippedWithoutReadingTheClockAndMeasuredWhenRecorded() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, counting());
    CountingClock clock = new CountingClock();
    // Not full yet: every one is recorded, with the duration its clock reading gives.
    for (int i = 0; i < 65; i++) {
      window.onFastSuccess(clock, 0);
    }
    assertThat(clock.reads).hasValue(65);
    assertThat(b.successes).hasValue(65);
    assertThat(window.isMarked()).isTrue(); // sample 64 checked and found it full

    for (int i = 0; i < 640; i++) {
      window.onFastSuccess(clock, 0);
    }
    // Samples 65..704: only the ten re-checks (128, 192, ..., 704) are recorded, and read the clock.
    assertThat(b.successes).hasValue(75);
    assertThat(clock.reads).hasValue(75);
    assertThat(window.isMarked()).isTrue();

    // Recorded, it is measured from its start: a reading past the threshold is a slow call, and
    // ends the shortcut.
    window.onError(FAST, BOOM);
    long start = Duration.ofHours(1).toNanos();
    clock.reading = start + Duration.ofSeconds(10).toNanos();
    window.onFastSuccess(clock, start);
    assertThat(b.real.getMetrics().getNumberOfSlowSuccessfulCalls()).as("10 s: fast").isZero();
    clock.reading = start + Duration.ofSeconds(61).toNanos();
    window.onFastSuccess(clock, start);
    assertThat(b.real.getMetrics().getNumberOfSlowSuccessfulCalls()).isEqualTo(1);
    assertThat(clock.reads).hasValue(77);
    assertThat(window.isMarked()).isFalse();
  }

  @Test
  void aSuccessKnownFastIsMeasuredAndRecordedWhileAnEventConsumerIsRegistered() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, counting());
    fill(window);
    AtomicInteger events = new AtomicInteger();
    b.real.getEventPublisher().onSuccess(e -> events.incrementAndGet());
    CountingClock clock = new CountingClock();
    for (int i = 0; i < 100; i++) {
      window.onFastSuccess(clock, 0);
    }
    assertThat(events).hasValue(100);
    assertThat(clock.reads).hasValue(100);
  }

  @Test
  void aSuccessKnownFastIsRecordedOnceATransitionReplacedTheMarkedWindow() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig()); // 3 probes
    int[] sample = {0}; // 0: every success checks the window; 1: no check, no re-check
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, () -> sample[0]);
    CountingClock clock = new CountingClock();
    for (int i = 0; i < 50; i++) {
      window.onSuccess(FAST); // the 50th fills the window and marks it
    }
    assertThat(window.isMarked()).isTrue();
    sample[0] = 1;
    window.onFastSuccess(clock, 0);
    assertThat(clock.reads).hasValue(0); // skipped while the marked window is the breaker's
    b.real.transitionToOpenState();
    b.real.transitionToHalfOpenState(); // new metrics: the mark no longer applies
    int before = b.successes.get();
    for (int i = 0; i < 3; i++) {
      window.onFastSuccess(clock, 0);
    }
    assertThat(b.successes.get() - before).isEqualTo(3);
    assertThat(clock.reads).hasValue(3);
    assertThat(b.real.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void aSuccessIsKnownFastOnlyWithinHalfTheSlowCallThreshold() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig()); // 60 s
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, counting());
    assertThat(window.knownFast(Duration.ofSeconds(30).toNanos())).isTrue();
    assertThat(window.knownFast(Duration.ofSeconds(30).toNanos() + 1)).isFalse();
    assertThat(window.knownFast(Long.MAX_VALUE)).isFalse();
  }

  @Test
  void aSlowSuccessOrAFailureIsRecordedAndEndsTheShortcutUntilTheWindowIsFullAgain() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, counting());
    fill(window);
    window.onError(FAST, BOOM);
    assertThat(window.isMarked()).isFalse();
    assertThat(b.real.getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
    int before = b.successes.get();
    for (int i = 0; i < 49; i++) {
      window.onSuccess(FAST);
    }
    assertThat(b.successes.get() - before).isEqualTo(49); // every one recorded
    assertThat(b.real.getMetrics().getNumberOfFailedCalls()).isEqualTo(1); // still in the window
    assertThat(window.isMarked()).isFalse();
    fill(window);
    assertThat(b.real.getMetrics().getNumberOfFailedCalls()).isZero();

    long slow = Duration.ofSeconds(61).toNanos(); // resilience4j's default threshold is 60 s
    before = b.successes.get();
    window.onSuccess(slow);
    assertThat(b.successes.get() - before).isEqualTo(1);
    assertThat(window.isMarked()).isFalse();
    assertThat(b.real.getMetrics().getNumberOfSlowCalls()).isEqualTo(1);
  }

  @Test
  void noWindowIsMarkedWhileAFailureIsBeingRecorded() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, () -> 16); // check always, skip
    fill(window);
    // Inside the failure's record, before it reaches the window, a success finds the window still
    // full of successes: it must not mark it, or a success after it would be skipped with the
    // failure already in the window.
    b.insideOnError = () -> {
      window.onSuccess(FAST);
      assertThat(window.isMarked()).isFalse();
    };
    window.onError(FAST, BOOM);
    b.insideOnError = () -> { };
    assertThat(window.isMarked()).isFalse();
    int before = b.successes.get();
    window.onSuccess(FAST);
    assertThat(b.successes.get() - before).isEqualTo(1);
  }

  @Test
  void aSuccessThatReadTheFiguresBeforeAFailureWasRecordedDoesNotMarkTheWindowAfterIt() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, () -> 16);
    fill(window);
    window.onError(FAST, BOOM);
    for (int i = 0; i < 49; i++) {
      window.onSuccess(FAST); // the failure is still in the window: checked, not marked
    }
    assertThat(window.isMarked()).isFalse();
    // The 50th success pushes the failure out and reads clean figures; a whole failure is recorded
    // between that read and its compare-and-set, which must then lose.
    b.insideNextBufferedRead = () -> window.onError(FAST, BOOM);
    window.onSuccess(FAST);
    assertThat(window.isMarked()).isFalse();
    assertThat(b.real.getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
    int before = b.successes.get();
    window.onSuccess(FAST);
    assertThat(b.successes.get() - before).isEqualTo(1);
  }

  @Test
  void aBreakerThatThrowsWhileRecordingAFailureLeavesTheWindowMarkableAgain() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, () -> 16); // check always, skip
    fill(window);
    b.insideOnError = () -> {
      throw new IllegalStateException("an event consumer's bug");
    };
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> window.onError(FAST, BOOM))
        .isInstanceOf(IllegalStateException.class);
    b.insideOnError = () -> { };
    assertThat(window.isMarked()).isFalse();
    window.onSuccess(FAST); // nothing is being recorded any more: the still-full window is marked
    assertThat(window.isMarked()).isTrue();
  }

  @Test
  void aHalfOpenBreakerClosesAfterItsPermittedSuccessesEvenWhenTheyFillAWindow() {
    // More probes than the closed window holds: a half-open window full of successes must not be
    // marked, or the probes that would close the breaker are skipped.
    // resilience4j's half-open window waits for min(minimumNumberOfCalls, probes) calls: 20 here.
    Counted b = new Counted(CircuitBreakerConfig.custom().slidingWindowSize(10)
        .minimumNumberOfCalls(20).permittedNumberOfCallsInHalfOpenState(20).build());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, () -> 16); // check always, skip
    b.real.transitionToOpenState();
    b.real.transitionToHalfOpenState();
    for (int i = 0; i < 20; i++) {
      window.onSuccess(FAST);
    }
    assertThat(b.real.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(b.successes).hasValue(20);
  }

  @Test
  void aFailureRecordedOutsideTheSdkIsNoticedAtTheNextRecheck() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, counting());
    fill(window);
    b.real.onError(1, TimeUnit.MILLISECONDS, BOOM); // not through the SDK: the mark stays
    int skips = 0;
    while (window.isMarked() && skips <= FullHealthyWindow.RECHECK_ONE_IN) {
      window.onSuccess(FAST);
      skips++;
    }
    assertThat(window.isMarked()).isFalse();
    assertThat(skips).isBetween(1, FullHealthyWindow.RECHECK_ONE_IN);
    for (int i = 0; i < 49; i++) {
      window.onSuccess(FAST);
    }
    assertThat(b.real.getMetrics().getNumberOfFailedCalls()).isZero(); // pushed out by successes
  }

  @Test
  void everySuccessIsRecordedWhileAnEventConsumerIsRegisteredAndTheFiguresAreReadOnlyToRecheck() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, counting());
    fill(window); // samples 0..64
    AtomicInteger events = new AtomicInteger();
    b.real.getEventPublisher().onSuccess(e -> events.incrementAndGet());
    int reads = b.figureReads.get();
    for (int i = 0; i < 640; i++) {
      window.onSuccess(FAST); // samples 65..704
    }
    assertThat(events).hasValue(640);
    // Re-checks at samples 128, 192, ..., 704: ten, each reading 3 figures.
    assertThat(b.figureReads.get() - reads).isEqualTo(30);
    assertThat(window.isMarked()).isTrue();
  }

  @Test
  void aSuccessAtTheSlowCallThresholdIsFastAndOneNanosecondOverIsSlow() {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker, () -> 16);
    fill(window);
    long threshold = b.real.getCircuitBreakerConfig().getSlowCallDurationThreshold().toNanos();
    int before = b.successes.get();
    window.onSuccess(threshold);
    assertThat(b.successes.get() - before).isZero(); // skipped: not slow, as for resilience4j
    assertThat(window.isMarked()).isTrue();
    window.onSuccess(threshold + 1);
    assertThat(b.successes.get() - before).isEqualTo(1);
    assertThat(window.isMarked()).isFalse();
    assertThat(b.real.getMetrics().getNumberOfSlowCalls()).isEqualTo(1);
  }

  @Test
  void afterConcurrentSuccessesFailuresAndSlowCallsTheWindowRecoversAndIsMarkedAgain()
      throws Exception {
    Counted b = new Counted(ResilientHttpClient.defaultCircuitBreakerConfig());
    FullHealthyWindow window = FullHealthyWindow.of(b.breaker);
    long slow = Duration.ofSeconds(61).toNanos();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int seed = t;
        done.add(pool.submit(() -> {
          java.util.Random random = new java.util.Random(seed);
          for (int i = 0; i < 20_000; i++) {
            int r = random.nextInt(100);
            if (r < 2) {
              window.onError(FAST, BOOM);
            } else if (r < 3) {
              window.onSuccess(slow);
            } else {
              window.onSuccess(FAST);
            }
          }
        }));
      }
      for (java.util.concurrent.Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    // Nothing stuck: 50 successes push every failure and slow call out, and the window is marked
    // again at a later check (one in 16, at random).
    for (int i = 0; i < 50; i++) {
      window.onSuccess(FAST);
    }
    CircuitBreaker.Metrics m = b.real.getMetrics();
    assertThat(m.getNumberOfFailedCalls()).isZero();
    assertThat(m.getNumberOfSlowCalls()).isZero();
    for (int i = 0; i < 2_000 && !window.isMarked(); i++) {
      window.onSuccess(FAST);
    }
    assertThat(window.isMarked()).isTrue();
  }

  @Test
  void aTimeBasedWindowHasNoShortcut() {
    CircuitBreaker timeBased = CircuitBreaker.of("t", CircuitBreakerConfig.custom()
        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.TIME_BASED).build());
    assertThat(FullHealthyWindow.of(timeBased)).isNull();
    assertThat(FullHealthyWindow.of(CircuitBreaker.ofDefaults("c"))).isNotNull();
  }

  @Test
  void onlyTheBreakersOfARegistryTheSdkMadeHaveTheShortcut() {
    okhttp3.HttpUrl url = okhttp3.HttpUrl.get("https://api.example/");
    CircuitBreakerConfig defaults = ResilientHttpClient.defaultCircuitBreakerConfig();
    assertThat(TargetCircuitBreakers.perTargetOwned(defaults).forUrl(url).window()).isNotNull();
    assertThat(TargetCircuitBreakers.perTarget(
        io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry.ofDefaults())
        .forUrl(url).window()).isNull();
    assertThat(TargetCircuitBreakers.single(CircuitBreaker.ofDefaults("one"))
        .forUrl(url).window()).isNull();
  }

  /** What a step of a property run does, to the breaker with the shortcut and to the reference. */
  enum Step { FAST_SUCCESS, SLOW_SUCCESS, ERROR, OPEN, HALF_OPEN, CLOSE, FORCE_OPEN, RESET }

  @Provide
  Arbitrary<List<Step>> steps() {
    // Mostly fast successes, so that the window fills and the shortcut is used.
    Arbitrary<Step> step = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(80, Arbitraries.just(Step.FAST_SUCCESS)),
        net.jqwik.api.Tuple.of(6, Arbitraries.just(Step.ERROR)),
        net.jqwik.api.Tuple.of(4, Arbitraries.just(Step.SLOW_SUCCESS)),
        net.jqwik.api.Tuple.of(10, Arbitraries.of(Step.OPEN, Step.HALF_OPEN, Step.CLOSE,
            Step.FORCE_OPEN, Step.RESET)));
    return step.list().ofMinSize(50).ofMaxSize(600);
  }

  @Property(tries = 300, seed = "20261202")
  void everyFigureTheBreakerShowsIsThatOfRecordingEveryOutcome(@ForAll("steps") List<Step> steps,
      @ForAll long samplerSeed, @ForAll boolean neverRecheck, @ForAll boolean knownFast,
      @ForAll @IntRange(min = 1, max = 20) int halfOpenCalls) {
    CircuitBreakerConfig config = CircuitBreakerConfig.custom()
        .slidingWindowSize(10).minimumNumberOfCalls(10).failureRateThreshold(50)
        .slowCallDurationThreshold(Duration.ofSeconds(1)).slowCallRateThreshold(50)
        .permittedNumberOfCallsInHalfOpenState(halfOpenCalls).build();
    CircuitBreaker reference = CircuitBreaker.of("reference", config);
    CircuitBreaker shortcut = CircuitBreaker.of("shortcut", config);
    java.util.Random random = new java.util.Random(samplerSeed);
    // Random samples, or every success checks while unmarked and none is re-checked once marked.
    FullHealthyWindow window = FullHealthyWindow.of(shortcut,
        neverRecheck ? () -> 16 : random::nextInt);
    long slow = Duration.ofSeconds(2).toNanos();
    // Fast successes known fast without their duration read the clock only when recorded.
    CountingClock clock = new CountingClock();
    Runnable fastSuccess = knownFast ? () -> window.onFastSuccess(clock, 0)
        : () -> window.onSuccess(FAST);
    for (Step step : steps) {
      switch (step) {
        case FAST_SUCCESS -> assertThat(thrown(fastSuccess))
            .isEqualTo(thrown(() -> reference.onSuccess(FAST, TimeUnit.NANOSECONDS)));
        case SLOW_SUCCESS -> assertThat(thrown(() -> window.onSuccess(slow)))
            .isEqualTo(thrown(() -> reference.onSuccess(slow, TimeUnit.NANOSECONDS)));
        case ERROR -> assertThat(thrown(() -> window.onError(FAST, BOOM)))
            .isEqualTo(thrown(() -> reference.onError(FAST, TimeUnit.NANOSECONDS, BOOM)));
        default -> {
          String refused = transition(reference, step);
          assertThat(transition(shortcut, step)).isEqualTo(refused);
        }
      }
      assertThat(figures(shortcut)).as("after %s", step).isEqualTo(figures(reference));
    }
  }

  /**
   * Runs {@code record}; the exception it threw, or null. (resilience4j 2.4 divides by a window
   * size of 0 when a breaker reset while forced open records a call: both breakers must agree.)
   */
  private static String thrown(Runnable record) {
    try {
      record.run();
      return null;
    } catch (RuntimeException e) {
      return e.getClass().getName();
    }
  }

  /** Makes the transition; the name of the exception when resilience4j refuses it, else null. */
  private static String transition(CircuitBreaker b, Step step) {
    try {
      switch (step) {
        case OPEN -> b.transitionToOpenState();
        case HALF_OPEN -> b.transitionToHalfOpenState();
        case CLOSE -> b.transitionToClosedState();
        case FORCE_OPEN -> b.transitionToForcedOpenState();
        case RESET -> b.reset();
        default -> throw new AssertionError(step);
      }
      return null;
    } catch (IllegalStateTransitionException e) {
      return e.getFromState() + " to " + e.getToState();
    }
  }

  private static List<Object> figures(CircuitBreaker b) {
    CircuitBreaker.Metrics m = b.getMetrics();
    return List.of(b.getState(), m.getNumberOfBufferedCalls(), m.getNumberOfFailedCalls(),
        m.getNumberOfSlowCalls(), m.getNumberOfSlowSuccessfulCalls(),
        m.getNumberOfSlowFailedCalls(),
        m.getNumberOfSuccessfulCalls(), m.getNumberOfNotPermittedCalls(), m.getFailureRate(),
        m.getSlowCallRate());
  }
}

package io.github.resilienthttp.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryBudgetExhaustedException;
import io.github.resilienthttp.TimeSource;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class TokenBucketRetryBudgetTest {
  private final FakeTime time = new FakeTime(1_000_000_000L);

  @Test
  void defaultsAreRatioTenPercentFloorThreePerSecondAndThirtyTokensStartingFull() {
    RetryBudget budget = RetryBudget.tokenBucketBuilder().timeSource(time).build();

    assertThat(budget).hasToString(
        "RetryBudget.tokenBucket(retryRatio=0.1, minRetriesPerSecond=3, maxTokens=30)");
    assertThat(budget.availableTokens()).isEqualTo(30.0);
    assertThat(RetryBudget.tokenBucket()).hasToString(budget.toString());
  }

  @Test
  void maxTokensDefaultsToTenSecondsOfTheFloorButAtLeastTen() {
    assertThat(RetryBudget.tokenBucketBuilder().minRetriesPerSecond(0).build().toString())
        .endsWith("maxTokens=10)");
    assertThat(RetryBudget.tokenBucketBuilder().minRetriesPerSecond(100).build().toString())
        .endsWith("maxTokens=1000)");
    assertThat(RetryBudget.tokenBucketBuilder().minRetriesPerSecond(10_000).build().toString())
        .endsWith("maxTokens=100000)");
    assertThat(RetryBudget.tokenBucketBuilder().maxTokens(7).minRetriesPerSecond(100).build().toString())
        .endsWith("maxTokens=7)");
  }

  @Test
  void aFullBucketDropsDepositsSoAThousandFirstAttemptsThenRetriesAllowOnlyMaxTokens() {
    RetryBudget budget = bucket(0.1, 0, 10);

    for (int i = 0; i < 1000; i++) {
      budget.onFirstAttempt();
    }

    assertThat(budget.availableTokens()).isEqualTo(10.0);
    assertThat(drain(budget)).isEqualTo(10);
    assertThat(budget.tryAcquireRetry()).isFalse();
  }

  @Test
  void interleavedTrafficReachesTheBoundExactly() {
    RetryBudget budget = bucket(0.1, 0, 10);
    int granted = drain(budget); // the initial content

    for (int i = 0; i < 1000; i++) {
      budget.onFirstAttempt();
      if (budget.tryAcquireRetry()) {
        granted++;
      }
    }

    // retryRatio × first attempts + maxTokens = 0.1 × 1000 + 10, with no floor.
    assertThat(granted).isEqualTo(110);
    assertThat(budget.availableTokens()).isZero();
  }

  @Test
  void aRefusedRetryWithdrawsNothing() {
    RetryBudget budget = bucket(0.1, 0, 10);
    drain(budget);
    for (int i = 0; i < 9; i++) {
      budget.onFirstAttempt();
    }

    assertThat(budget.tryAcquireRetry()).isFalse();
    assertThat(budget.availableTokens()).isEqualTo(0.9);

    budget.onFirstAttempt();
    assertThat(budget.tryAcquireRetry()).isTrue();
    assertThat(budget.availableTokens()).isZero();
  }

  @Test
  void theRatioIsRoundedDownSoRoundingNeverAllowsMore() {
    RetryBudget budget = bucket(1.0 / 3, 0, 10);
    drain(budget);

    budget.onFirstAttempt();
    budget.onFirstAttempt();
    budget.onFirstAttempt(); // 3 × 0.333333333: one nano-token short of a retry

    assertThat(budget.tryAcquireRetry()).isFalse();
    budget.onFirstAttempt();
    assertThat(budget.tryAcquireRetry()).isTrue();
  }

  @Test
  void withoutTrafficTheFloorRefillsThreeTokensPerSecond() {
    RetryBudget budget = bucket(0.1, 3, 100);
    assertThat(drain(budget)).isEqualTo(100);

    time.advance(Duration.ofSeconds(10));

    assertThat(budget.availableTokens()).isEqualTo(30.0);
    assertThat(drain(budget)).isEqualTo(30);
  }

  @Test
  void theFloorRefillIsCappedAtMaxTokens() {
    RetryBudget budget = bucket(0.1, 3, 10);
    drain(budget);

    time.advance(Duration.ofSeconds(10)); // 30 tokens' worth of time

    assertThat(drain(budget)).isEqualTo(10);
  }

  @Test
  void theFloorIsCreditedToTheNanosecond() {
    RetryBudget budget = bucket(0.1, 3, 10);
    drain(budget);

    time.advance(Duration.ofNanos(333_333_333)); // 0.999999999 token
    assertThat(budget.tryAcquireRetry()).isFalse();
    time.advance(Duration.ofNanos(1));
    assertThat(budget.tryAcquireRetry()).isTrue();
  }

  @Test
  void retryingEveryTenMillisecondsGetsExactlyTheFloorOverAHundredSeconds() {
    RetryBudget budget = bucket(0.1, 3, 10);
    drain(budget);

    int granted = 0;
    for (int step = 1; step <= 10_000; step++) {
      time.advance(Duration.ofMillis(10));
      if (budget.tryAcquireRetry()) {
        granted++;
      }
    }

    assertThat(granted).isEqualTo(300); // minRetriesPerSecond × T = 3 × 100 s
  }

  @Test
  void tokensNeverExceedMaxTokensAfterHugeDepositsOrLongQuiet() {
    RetryBudget budget = bucket(1000, 10_000, 5);
    drain(budget);

    for (int i = 0; i < 1_000_000; i++) {
      budget.onFirstAttempt();
    }
    assertThat(budget.availableTokens()).isEqualTo(5.0);

    time.advance(Duration.ofNanos(Long.MAX_VALUE / 2)); // ~146 years: elapsed × rate would overflow
    assertThat(budget.availableTokens()).isEqualTo(5.0);
    assertThat(drain(budget)).isEqualTo(5);
  }

  @Test
  void aLargeBucketRefillsWithoutOverflowAfterThirtyQuietDays() {
    RetryBudget budget = bucket(0.1, 10_000, 1_000_000);
    assertThat(drain(budget)).isEqualTo(1_000_000);

    time.advance(Duration.ofDays(30));

    assertThat(budget.availableTokens()).isEqualTo(1_000_000.0);
  }

  @Test
  void theFloorKeepsWorkingWhenNanoTimeWrapsAround() {
    FakeTime wrapping = new FakeTime(Long.MAX_VALUE - 1_000_000_000L);
    RetryBudget budget = RetryBudget.tokenBucketBuilder()
        .retryRatio(0.1).minRetriesPerSecond(3).maxTokens(10).timeSource(wrapping).build();
    drain(budget);

    wrapping.advance(Duration.ofSeconds(2)); // nanoTime is now negative

    assertThat(budget.availableTokens()).isEqualTo(6.0);
  }

  @Test
  void anOutageGetsTenPercentRetriesAndTheBudgetRecoversWithTraffic() {
    RetryBudget budget = bucket(0.1, 0, 10);

    // 1000 operations fail, each wanting 2 retries: 2000 retries without a budget.
    int granted = 0;
    for (int op = 0; op < 1000; op++) {
      budget.onFirstAttempt();
      for (int retry = 0; retry < 2 && budget.tryAcquireRetry(); retry++) {
        granted++;
      }
    }
    // 10 initial + 999 × 0.1 (the first operation's deposit fell into the full bucket), rounded down.
    assertThat(granted).isEqualTo(109);
    assertThat(budget.tryAcquireRetry()).isFalse();

    // The server is back: successful first attempts refill the bucket; nothing else is needed.
    for (int op = 0; op < 100; op++) {
      budget.onFirstAttempt();
    }
    assertThat(budget.availableTokens()).isEqualTo(10.0);
  }

  @Test
  void aDrainedBucketRecoversWithNoTrafficAtAllThroughTheFloor() {
    RetryBudget budget = RetryBudget.tokenBucketBuilder().timeSource(time).build();
    drain(budget);

    time.advance(Duration.ofMinutes(5));

    assertThat(budget.availableTokens()).isEqualTo(30.0);
  }

  @Test
  void noneNeverAllowsARetry() {
    RetryBudget budget = RetryBudget.none();
    for (int i = 0; i < 1000; i++) {
      budget.onFirstAttempt();
    }

    assertThat(budget.tryAcquireRetry()).isFalse();
    assertThat(budget.availableTokens()).isZero();
    assertThat(budget).hasToString("RetryBudget.none()");
  }

  @Test
  void unlimitedAlwaysAllowsARetry() {
    RetryBudget budget = RetryBudget.unlimited();

    for (int i = 0; i < 100_000; i++) {
      assertThat(budget.tryAcquireRetry()).isTrue();
    }
    assertThat(budget.availableTokens()).isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(budget).hasToString("RetryBudget.unlimited()");
  }

  @Test
  void invalidSettingsFailAtBuildNamingFieldAndValue() {
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().retryRatio(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("retryRatio must be in 1.0E-9..1000 but was 0.0");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().retryRatio(-0.5).build())
        .hasMessage("retryRatio must be in 1.0E-9..1000 but was -0.5");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().retryRatio(1000.5).build())
        .hasMessage("retryRatio must be in 1.0E-9..1000 but was 1000.5");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().retryRatio(1e-12).build())
        .hasMessage("retryRatio must be in 1.0E-9..1000 but was 1.0E-12");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().retryRatio(Double.NaN).build())
        .hasMessage("retryRatio must be in 1.0E-9..1000 but was NaN");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().minRetriesPerSecond(-1).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minRetriesPerSecond must be in 0..10000 but was -1");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().minRetriesPerSecond(10_001).build())
        .hasMessage("minRetriesPerSecond must be in 0..10000 but was 10001");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().maxTokens(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxTokens must be in 1..1000000 but was 0");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().maxTokens(1_000_001).build())
        .hasMessage("maxTokens must be in 1..1000000 but was 1000001");
    assertThatThrownBy(() -> RetryBudget.tokenBucketBuilder().timeSource(null))
        .isInstanceOf(NullPointerException.class).hasMessage("timeSource");

    assertThat(RetryBudget.tokenBucketBuilder().retryRatio(1000).minRetriesPerSecond(0).maxTokens(1)
        .build()).isNotNull();
  }

  @Test
  void theExhaustedExceptionCarriesTheOperationAndShowsOnlyTheKeysPrefix() {
    IOException last = new IOException("connection reset");
    RetryBudgetExhaustedException e = new RetryBudgetExhaustedException(
        "retry budget exhausted", "0123456789abcdef", true, 2,
        RetryBudgetExhaustedException.REASON, last);

    assertThat(e).isInstanceOf(ResilientHttpException.class).isInstanceOf(OperationFailure.class);
    assertThat(e.idempotencyKey()).isEqualTo("0123456789abcdef");
    assertThat(e.idempotencyKeySent()).isTrue();
    assertThat(e.attempts()).isEqualTo(2);
    assertThat(e.reason()).isEqualTo("retry-budget-exhausted");
    assertThat(e).hasCause(last);
    assertThat(e.getMessage())
        .startsWith("retry budget exhausted")
        .contains("01234567").doesNotContain("89abcdef")
        .contains("attempts=2").contains("reason=retry-budget-exhausted");
  }

  /**
   * Eight threads hammer one bucket with no floor, so the bound is exact: after the initial content is
   * drained, retries granted ≤ retryRatio × first attempts. Each thread asks for 3 retries per first
   * attempt, so the bucket stays far below its 1000 tokens and no deposit is dropped: the bound must
   * then be reached exactly, which also proves no update was lost.
   */
  @Test
  void concurrentOperationsNeverExceedTheBoundAndLoseNoUpdate() throws InterruptedException {
    RetryBudget budget = bucket(0.1, 0, 1000);
    assertThat(drain(budget)).isEqualTo(1000);
    int threads = 8;
    int firstsPerThread = 20_000;
    LongAdder granted = new LongAdder();

    runConcurrently(threads, t -> {
      for (int i = 0; i < firstsPerThread; i++) {
        budget.onFirstAttempt();
        for (int r = 0; r < 3; r++) {
          if (budget.tryAcquireRetry()) {
            granted.increment();
          }
        }
      }
    });

    long bound = threads * firstsPerThread / 10; // 0.1 × 160_000 first attempts
    assertThat(granted.sum()).isLessThanOrEqualTo(bound);
    assertThat(granted.sum() + drain(budget)).isEqualTo(bound);
  }

  /** The same with the floor on and the clock moving under the threads: only the bound can be exact. */
  @Test
  void concurrentOperationsWithAMovingClockNeverExceedTheBound() throws InterruptedException {
    FakeTime moving = new FakeTime(0);
    RetryBudget budget = RetryBudget.tokenBucketBuilder()
        .retryRatio(0.05).minRetriesPerSecond(50).maxTokens(20).timeSource(moving).build();
    int threads = 8;
    int firstsPerThread = 20_000;
    LongAdder granted = new LongAdder();

    runConcurrently(threads, t -> {
      SplittableRandom random = new SplittableRandom(t);
      for (int i = 0; i < firstsPerThread; i++) {
        budget.onFirstAttempt();
        moving.advance(Duration.ofNanos(random.nextLong(0, 100_000)));
        for (int r = 0; r < 2; r++) {
          if (budget.tryAcquireRetry()) {
            granted.increment();
          }
        }
      }
    });

    // maxTokens + retryRatio × first attempts + minRetriesPerSecond × T, in nano-tokens.
    long boundUnits = 20 * 1_000_000_000L + threads * firstsPerThread * 50_000_000L
        + 50 * moving.nanoTime();
    assertThat(granted.sum()).isGreaterThan(0);
    assertThat(granted.sum() * 1_000_000_000L).isLessThanOrEqualTo(boundUnits);
  }

  /**
   * For any sequence of first attempts, retries and clock advances: the bucket grants exactly what an
   * exact model grants (tokens as {@link BigDecimal}), stays within {@code [0, maxTokens]}, and over
   * every window of the sequence (every pair of indices {@code i ≤ j}) grants at most
   * {@code retryRatio × firsts + minRetriesPerSecond × (time(j) − time(i)) + maxTokens}.
   *
   * <p>Tolerance (epsilon) for fixed-point rounding: none. The generated ratios have at most 6
   * decimals, which the bucket holds exactly at 10<sup>-9</sup> token, and the floor is credited in
   * whole nanoseconds at exactly {@code minRetriesPerSecond} nano-tokens per nanosecond; the bound is
   * compared in integer nano-tokens.
   */
  @Property(tries = 500)
  void grantedRetriesStayWithinTheBoundOverEveryWindow(
      @ForAll @IntRange(min = 1, max = 2_000_000) int ratioMicros,
      @ForAll @IntRange(min = 0, max = 50) int minRetriesPerSecond,
      @ForAll @IntRange(min = 1, max = 100) int maxTokens,
      @ForAll long clockOrigin,
      @ForAll("operations") List<Op> ops) {
    FakeTime clock = new FakeTime(clockOrigin);
    double ratio = ratioMicros / 1e6;
    RetryBudget budget = RetryBudget.tokenBucketBuilder().retryRatio(ratio)
        .minRetriesPerSecond(minRetriesPerSecond).maxTokens(maxTokens).timeSource(clock).build();
    ExactModel model = new ExactModel(new BigDecimal(ratioMicros).movePointLeft(6),
        minRetriesPerSecond, maxTokens);

    int n = ops.size();
    long[] grantedUpTo = new long[n + 1];
    long[] firstsUpTo = new long[n + 1];
    long[] timeAt = new long[n]; // nanoseconds since the bucket was built
    long elapsed = 0;
    for (int k = 0; k < n; k++) {
      Op op = ops.get(k);
      grantedUpTo[k + 1] = grantedUpTo[k];
      firstsUpTo[k + 1] = firstsUpTo[k];
      switch (op.kind()) {
        case FIRST_ATTEMPT -> {
          budget.onFirstAttempt();
          model.onFirstAttempt(elapsed);
          firstsUpTo[k + 1]++;
        }
        case RETRY -> {
          boolean allowed = budget.tryAcquireRetry();
          assertThat(allowed).as("retry at op %d", k).isEqualTo(model.tryAcquireRetry(elapsed));
          if (allowed) {
            grantedUpTo[k + 1]++;
          }
        }
        case ADVANCE -> {
          clock.advance(Duration.ofNanos(op.nanos()));
          elapsed += op.nanos();
        }
      }
      timeAt[k] = elapsed;
      assertThat(budget.availableTokens()).isBetween(0.0, (double) maxTokens);
    }

    long ratioUnits = ratioMicros * 1000L;
    for (int i = 0; i < n; i++) {
      for (int j = i; j < n; j++) {
        long granted = grantedUpTo[j + 1] - grantedUpTo[i];
        long firsts = firstsUpTo[j + 1] - firstsUpTo[i];
        long boundUnits = firsts * ratioUnits + minRetriesPerSecond * (timeAt[j] - timeAt[i])
            + maxTokens * 1_000_000_000L;
        if (granted * 1_000_000_000L > boundUnits) {
          throw new AssertionError("window " + i + ".." + j + " granted " + granted
              + " retries, bound " + boundUnits / 1e9);
        }
      }
    }
  }

  @Provide
  Arbitrary<List<Op>> operations() {
    Arbitrary<Op> first = Arbitraries.just(new Op(Kind.FIRST_ATTEMPT, 0));
    Arbitrary<Op> retry = Arbitraries.just(new Op(Kind.RETRY, 0));
    Arbitrary<Op> advance = Arbitraries.oneOf(
        Arbitraries.longs().between(0, 1_000_000_000L), // up to 1 s, to the nanosecond
        Arbitraries.longs().between(0, 60_000_000_000L)) // up to a minute
        .map(nanos -> new Op(Kind.ADVANCE, nanos));
    return Arbitraries.frequencyOf(Tuple.of(4, first), Tuple.of(5, retry), Tuple.of(1, advance))
        .list().ofMaxSize(300);
  }

  enum Kind { FIRST_ATTEMPT, RETRY, ADVANCE }

  record Op(Kind kind, long nanos) {}

  /** The token bucket of the spec, sequential and in exact decimal arithmetic. */
  private static final class ExactModel {
    private static final BigDecimal NANOS_PER_SECOND = BigDecimal.valueOf(1_000_000_000L);

    private final BigDecimal ratio;
    private final BigDecimal perSecond;
    private final BigDecimal max;
    private BigDecimal tokens;
    private long lastNanos;

    ExactModel(BigDecimal ratio, int perSecond, int max) {
      this.ratio = ratio;
      this.perSecond = BigDecimal.valueOf(perSecond);
      this.max = BigDecimal.valueOf(max);
      this.tokens = this.max;
    }

    void onFirstAttempt(long nanos) {
      refill(nanos);
      tokens = tokens.add(ratio).min(max);
    }

    boolean tryAcquireRetry(long nanos) {
      refill(nanos);
      if (tokens.compareTo(BigDecimal.ONE) < 0) {
        return false;
      }
      tokens = tokens.subtract(BigDecimal.ONE);
      return true;
    }

    private void refill(long nanos) {
      BigDecimal seconds = BigDecimal.valueOf(nanos - lastNanos).divide(NANOS_PER_SECOND);
      tokens = tokens.add(perSecond.multiply(seconds)).min(max);
      lastNanos = nanos;
    }
  }

  private RetryBudget bucket(double retryRatio, int minRetriesPerSecond, int maxTokens) {
    return RetryBudget.tokenBucketBuilder().retryRatio(retryRatio)
        .minRetriesPerSecond(minRetriesPerSecond).maxTokens(maxTokens).timeSource(time).build();
  }

  /** Takes retries until the budget refuses; returns how many it allowed. */
  private static int drain(RetryBudget budget) {
    int granted = 0;
    while (budget.tryAcquireRetry()) {
      granted++;
      if (granted > 10_000_000) {
        throw new AssertionError("the budget never refuses");
      }
    }
    return granted;
  }

  interface Worker {
    void run(int thread);
  }

  /** Starts all threads at once (a latch), waits for them, and rethrows the first failure. */
  private static void runConcurrently(int threads, Worker worker) throws InterruptedException {
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> started = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread th = new Thread(() -> {
        try {
          start.await();
          worker.run(thread);
        } catch (Throwable e) {
          synchronized (failures) {
            failures.add(e);
          }
        }
      }, "budget-" + t);
      th.start();
      started.add(th);
    }
    start.countDown();
    for (Thread th : started) {
      th.join(60_000);
    }
    assertThat(failures).isEmpty();
    assertThat(started).noneMatch(Thread::isAlive);
  }

  @Test
  void aRefundPutsBackTheTokenOfARetryThatNeverHappenedButNeverAboveTheCap() {
    FakeTime time = new FakeTime(0);
    RetryBudget budget = RetryBudget.tokenBucketBuilder().minRetriesPerSecond(0).maxTokens(5)
        .timeSource(time).build();
    assertThat(budget.tryAcquireRetry()).isTrue();
    assertThat(budget.tryAcquireRetry()).isTrue();
    assertThat(budget.availableTokens()).isEqualTo(3.0);
    budget.refundRetry();
    assertThat(budget.availableTokens()).isEqualTo(4.0);
    budget.refundRetry();
    budget.refundRetry();
    assertThat(budget.availableTokens()).isEqualTo(5.0);
  }

  /** Settable monotonic time; {@code sleep} advances it; the wall clock is the epoch. Thread-safe. */
  private static final class FakeTime implements TimeSource {
    private final AtomicLong nanos;

    FakeTime(long startNanos) {
      this.nanos = new AtomicLong(startNanos);
    }

    void advance(Duration d) {
      nanos.addAndGet(d.toNanos());
    }

    @Override
    public long nanoTime() {
      return nanos.get();
    }

    @Override
    public Instant now() {
      return Instant.EPOCH;
    }

    @Override
    public void sleep(Duration duration) {
      advance(duration);
    }
  }
}

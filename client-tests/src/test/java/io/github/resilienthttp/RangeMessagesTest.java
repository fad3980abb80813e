package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every builder's range check fails in one format, naming the field, the range and the value
 * ({@code internal.util.Ranges}): "{@code <field> must be in <min>..<max> but was <value>}", or
 * "{@code must be at least <min>}" without an upper bound.
 */
class RangeMessagesTest {

  static Stream<Arguments> settings() {
    OutcomeQuery query = OutcomeQuery.lookup((request, key) -> HttpUrl.get("http://localhost/"));
    return Stream.of(
        row("maxAttempts must be in 1..100 but was 0",
            () -> RetryPolicy.builder().maxAttempts(0).build()),
        row("maxReplayableBodyBytes must be at least 0 but was -1",
            () -> RetryPolicy.builder().maxReplayableBodyBytes(-1).build()),
        row("deadline must be in PT0.001S..PT24H but was PT25H",
            () -> RetryPolicy.builder().deadline(Duration.ofHours(25)).build()),
        row("retryRatio must be in 1.0E-9..1000 but was 0.0",
            () -> RetryBudget.tokenBucketBuilder().retryRatio(0).build()),
        row("retryRatio must be in 1.0E-9..1000 but was NaN",
            () -> RetryBudget.tokenBucketBuilder().retryRatio(Double.NaN).build()),
        row("maxTokens must be in 1..1000000 but was 0",
            () -> RetryBudget.tokenBucketBuilder().maxTokens(0).build()),
        row("percentile must be in 50..99.9 but was 100.0",
            () -> HedgingPolicy.builder()
                .percentileDelay(100, Duration.ZERO, Duration.ofSeconds(1)).build()),
        row("maxHedges must be in 1..4 but was 5",
            () -> HedgingPolicy.builder().delay(Duration.ZERO).maxHedges(5).build()),
        row("jitter must be in 0..1 but was 1.5",
            () -> AsyncOperationPolicy.builder().jitter(1.5).build()),
        row("maxPollInterval must be in PT1S..PT24H but was PT0.5S",
            () -> AsyncOperationPolicy.builder().maxPollInterval(Duration.ofMillis(500)).build()),
        row("maxStatusBodyBytes must be in 1..1048576 but was 0",
            () -> AsyncOperationPolicy.builder().maxStatusBodyBytes(0).build()),
        row("maxResends must be in 0..10 but was 11",
            () -> OutcomeQueryPolicy.builder(query).maxResends(11).build()),
        row("graceDelay must be in PT0S..PT24H but was PT-0.001S",
            () -> OutcomeQueryPolicy.builder(query).graceDelay(Duration.ofMillis(-1)).build()),
        row("statuses must be in 400..499 but was 500",
            () -> KeyMismatchClassifier.statuses(500)),
        row("delay must be at least PT0S but was PT-1S",
            () -> Backoff.fixed(Duration.ofSeconds(-1))),
        row("max must be at least PT1S but was PT0.5S",
            () -> Backoff.exponentialFullJitter(Duration.ofSeconds(1), Duration.ofMillis(500))),
        row("retryAfter must be at least PT0S but was PT-1S",
            () -> Decision.retry("x", Optional.of(Duration.ofSeconds(-1)))),
        row("lease must be in PT0.000000001S..PT24H but was PT0S",
            () -> Outbox.inMemory().claim(Instant.EPOCH, 1, Duration.ZERO)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("settings")
  void anOutOfRangeSettingIsNamedWithItsRangeAndValue(String message, Executable build) {
    assertThatThrownBy(build::execute)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  private static Arguments row(String message, Executable build) {
    return Arguments.of(message, build);
  }
}

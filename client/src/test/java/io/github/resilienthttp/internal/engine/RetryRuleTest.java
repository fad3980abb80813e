package io.github.resilienthttp.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.Decision;
import io.github.resilienthttp.internal.engine.RetryRule.Kind;
import io.github.resilienthttp.internal.engine.RetryRule.Verdict;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The retry rule as a pure function: every branch, no sockets, no clock. */
class RetryRuleTest {
  private static final long MIN = io.github.resilienthttp.internal.util.Floors.MIN_ATTEMPT_NANOS;
  private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(60);
  private static final long TEN_SECONDS = Duration.ofSeconds(10).toNanos();

  private static Verdict first(Decision d, int attempt, boolean idempotent, boolean resendBlocked) {
    return RetryRule.afterAttempt(d, attempt, 3, idempotent, resendBlocked);
  }

  @Test
  void successAndPermanentAnswersAreFinal() {
    assertThat(first(Decision.success("ok"), 1, false, false).kind()).isEqualTo(Kind.RETURN);
    assertThat(first(Decision.fail("status-404"), 1, true, false).kind()).isEqualTo(Kind.FAIL);
    // Final even on the last attempt and with a one-shot body.
    assertThat(first(Decision.success("ok"), 3, true, true).kind()).isEqualTo(Kind.RETURN);
  }

  @Test
  void anAnswerThatMayHaveBeenProcessedIsRetriedOnlyWhenIdempotent() {
    Verdict keyless = first(Decision.retryIfIdempotent("status-502"), 1, false, false);
    assertThat(keyless.kind()).isEqualTo(Kind.OUTCOME_UNKNOWN);
    assertThat(keyless.reason()).isEqualTo("status-502");
    assertThat(first(Decision.retryIfIdempotent("status-502"), 1, true, false)).isNull();
    // "Not processed" answers (503, 429) are retried whatever the method.
    assertThat(first(Decision.retry("status-503"), 1, false, false)).isNull();
  }

  @Test
  void aOneShotBodyThatMayHaveReachedTheServerIsNotSentAgain() {
    Verdict unknown = first(Decision.retryIfIdempotent("timeout"), 1, true, true);
    assertThat(unknown.kind()).isEqualTo(Kind.OUTCOME_UNKNOWN);
    assertThat(unknown.reason()).isEqualTo("one-shot-body");
    Verdict notProcessed = first(Decision.retry("status-503"), 1, true, true);
    assertThat(notProcessed.kind()).isEqualTo(Kind.GIVE_UP);
    assertThat(notProcessed.reason()).isEqualTo("one-shot-body");
  }

  @Test
  void theLastAttemptGivesUp() {
    assertThat(first(Decision.retry("status-503"), 2, false, false)).isNull();
    Verdict last = first(Decision.retry("status-503"), 3, false, false);
    assertThat(last.kind()).isEqualTo(Kind.GIVE_UP);
    assertThat(last.reason()).isEqualTo("attempts-exhausted");
    assertThat(last.message()).isEqualTo("all 3 attempts failed");
  }

  @Test
  void retryAfterLengthensTheWaitButNeverShortensIt() {
    Decision longer = Decision.retry("status-503", Optional.of(Duration.ofSeconds(2)));
    Verdict v = RetryRule.retry(longer, Duration.ofMillis(100), MAX_RETRY_AFTER, TEN_SECONDS, MIN, false);
    assertThat(v.kind()).isEqualTo(Kind.RETRY);
    assertThat(v.delay()).isEqualTo(Duration.ofSeconds(2));
    assertThat(v.fromRetryAfter()).isTrue();

    Decision shorter = Decision.retry("status-503", Optional.of(Duration.ofMillis(10)));
    Verdict w = RetryRule.retry(shorter, Duration.ofMillis(100), MAX_RETRY_AFTER, TEN_SECONDS, MIN, false);
    assertThat(w.delay()).isEqualTo(Duration.ofMillis(100));
    assertThat(w.fromRetryAfter()).isFalse();
  }

  @Test
  void aRetryAfterAboveTheMaximumGivesUp() {
    Decision d = Decision.retry("status-503", Optional.of(Duration.ofSeconds(61)));
    Verdict v = RetryRule.retry(d, Duration.ZERO, MAX_RETRY_AFTER, Long.MAX_VALUE, MIN, false);
    assertThat(v.kind()).isEqualTo(Kind.GIVE_UP);
    assertThat(v.reason()).isEqualTo("retry-after-too-long");
  }

  @Test
  void theWaitPlusTheDeadlinesFloorMustFitInTheTimeLeft() {
    Decision d = Decision.retry("status-503");
    long left = Duration.ofMillis(101).toNanos();
    assertThat(RetryRule.retry(d, Duration.ofMillis(100), MAX_RETRY_AFTER, left, MIN, false).kind())
        .isEqualTo(Kind.RETRY);
    assertThat(RetryRule.retry(d, Duration.ofMillis(100).plusNanos(1), MAX_RETRY_AFTER, left, MIN, false)
        .kind()).isEqualTo(Kind.DEADLINE);
  }

  @Test
  void aForeverBackoffIsADeadlineNotAnOverflow() {
    Verdict v = RetryRule.retry(Decision.retry("status-503"), Duration.ofSeconds(Long.MAX_VALUE),
        MAX_RETRY_AFTER, TEN_SECONDS, MIN, false);
    assertThat(v.kind()).isEqualTo(Kind.DEADLINE);
    assertThat(v.message()).contains("wait " + Long.MAX_VALUE + " ms");
  }

  @Test
  void anOpenBreakerStopsARetryThatWouldOtherwiseRun() {
    Verdict v = RetryRule.retry(Decision.retry("status-503"), Duration.ofMillis(1), MAX_RETRY_AFTER,
        TEN_SECONDS, MIN, true);
    assertThat(v.kind()).isEqualTo(Kind.BREAKER_OPEN);
    // The deadline is checked first: a retry that could not run anyway is a deadline.
    assertThat(RetryRule.retry(Decision.retry("status-503"), Duration.ofSeconds(20), MAX_RETRY_AFTER,
        TEN_SECONDS, MIN, true).kind()).isEqualTo(Kind.DEADLINE);
  }
}

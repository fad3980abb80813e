package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.internal.engine.Attempt;
import io.github.resilienthttp.internal.engine.Run;
import java.time.Duration;
import java.time.Instant;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * When an attempt's success may skip the breaker's clock reading ({@code FullHealthyWindow}): only
 * while the deadline watchdog watches its call on the system clock, bounded by the attempt's own
 * time before the deadline. Calls are created, never executed.
 */
class AttemptLongestTest {
  private final Request request = new Request.Builder().url("http://127.0.0.1:1/").build();
  private ResilientHttpClient client;

  @AfterEach
  void close() {
    if (client != null) {
      client.closeNow();
    }
  }

  private Run operation(Duration deadline) {
    Run op = new Run(client.runtime());
    op.define(request, null, false, deadline, null, null);
    return op;
  }

  private static Attempt attempt(Run op, AttemptKind kind, long startNanos) {
    return op.countAttempt(new Attempt(op), kind, startNanos);
  }

  @Test
  void aWatchedAttemptIsBoundedByItsOwnTimeBeforeTheDeadline() {
    client = ResilientHttpClient.wrap(new OkHttpClient()).build();
    Run op = operation(Duration.ofSeconds(20));
    long start = op.deadlineNanos() - Duration.ofSeconds(12).toNanos(); // 12 s before it
    Attempt first = attempt(op, AttemptKind.FIRST, start);
    assertThat(first.longestNanos()).isEqualTo(Long.MAX_VALUE); // no call yet: nothing watches it
    op.newAttemptCall(first, request);
    assertThat(first.longestNanos()).isEqualTo(Duration.ofSeconds(12).toNanos());

    // A hedged copy's call becomes the watched one: the first copy is no longer bounded.
    Attempt hedge = attempt(op, AttemptKind.HEDGE, op.deadlineNanos() - 5_000_000_000L);
    op.newAttemptCall(hedge, request);
    assertThat(hedge.longestNanos()).isEqualTo(5_000_000_000L);
    assertThat(first.longestNanos()).isEqualTo(Long.MAX_VALUE);
  }

  /** A clock of the client's own that never moves. */
  private static final class StillClock implements TimeSource {
    @Override
    public long nanoTime() {
      return 0;
    }

    @Override
    public Instant now() {
      return Instant.EPOCH;
    }

    @Override
    public void sleep(Duration duration) {}
  }

  @Test
  void onTheClientsOwnClockNoAttemptIsBounded() {
    client = ResilientHttpClient.wrap(new OkHttpClient()).timeSource(new StillClock()).build();
    Run op = operation(Duration.ofSeconds(20));
    Attempt first = attempt(op, AttemptKind.FIRST, op.deadlineNanos() - 1_000_000_000L);
    op.newAttemptCall(first, request);
    assertThat(first.longestNanos()).isEqualTo(Long.MAX_VALUE);
  }
}

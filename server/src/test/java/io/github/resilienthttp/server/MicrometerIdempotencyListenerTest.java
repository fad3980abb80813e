package io.github.resilienthttp.server;

import static io.github.resilienthttp.server.Requests.post;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.server.micrometer.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MicrometerIdempotencyListenerTest {
  @Test
  void countsClaimsReplaysConflictsMismatchesAndExpiredClaims() {
    MutableClock clock = new MutableClock();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    IdempotencyGuard guard = IdempotencyGuard.builder().store(new InMemoryIdempotencyStore(clock))
        .clock(clock).lease(Duration.ofSeconds(1)).listener(new MicrometerIdempotencyListener(registry)).build();
    IdempotencyGuard.Handler ok = r -> IdempotentResponse.of(200, "text/plain", "ok");

    guard.handle(post("a", "{}"), ok);          // claimed
    guard.handle(post("a", "{}"), ok);          // replayed
    guard.handle(post("a", "{\"x\":1}"), ok);   // mismatch
    guard.admit(post("b", "{}"));               // claimed, then "crashes"
    guard.handle(post("b", "{}"), ok);          // in progress
    clock.advance(Duration.ofSeconds(1));
    guard.handle(post("b", "{}"), ok);          // claimed, taking an expired claim over
    guard.handle(post("c d", "{}"), ok);        // rejected

    assertThat(count(registry, "claimed")).isEqualTo(3);
    assertThat(count(registry, "replayed")).isEqualTo(1);
    assertThat(count(registry, "mismatch")).isEqualTo(1);
    assertThat(count(registry, "in_progress")).isEqualTo(1);
    assertThat(count(registry, "claim_expired")).isEqualTo(1);
    assertThat(count(registry, "rejected")).isEqualTo(1);
  }

  private static double count(SimpleMeterRegistry registry, String outcome) {
    return registry.get(MicrometerIdempotencyListener.METER).tag("outcome", outcome).counter().count();
  }
}

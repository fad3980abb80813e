package io.github.resilienthttp.callbacks;

import static io.github.resilienthttp.callbacks.StandardWebhooksSchemeTest.ID;
import static io.github.resilienthttp.callbacks.StandardWebhooksSchemeTest.PAYLOAD;
import static io.github.resilienthttp.callbacks.StandardWebhooksSchemeTest.SECRET;
import static io.github.resilienthttp.callbacks.StandardWebhooksSchemeTest.SIGNATURE;
import static io.github.resilienthttp.callbacks.StandardWebhooksSchemeTest.TIMESTAMP;
import static io.github.resilienthttp.callbacks.StandardWebhooksSchemeTest.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.callbacks.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class CallbackVerifierTest {
  final Instant signedAt = Instant.ofEpochSecond(TIMESTAMP);
  final ManualClock clock = new ManualClock(signedAt);
  final CallbackVerifier verifier = CallbackVerifier.builder()
      .scheme(StandardWebhooksScheme.of(SECRET)).clock(clock).build();
  final CallbackHeaders vector = headers(ID, Long.toString(TIMESTAMP), SIGNATURE);

  @Test
  void defaultToleranceIsFiveMinutesInBothDirections_boundaryIncluded() throws Exception {
    assertThat(verifier.tolerance()).isEqualTo(Duration.ofMinutes(5));
    for (Duration offset : new Duration[] {Duration.ZERO, Duration.ofMinutes(5), Duration.ofMinutes(-5)}) {
      clock.set(signedAt.plus(offset));
      assertThat(verifier.verify(vector, PAYLOAD).eventId()).contains(ID);
    }
    clock.set(signedAt.plus(Duration.ofMinutes(5).plusSeconds(1)));
    assertThatThrownBy(() -> verifier.verify(vector, PAYLOAD))
        .isInstanceOfSatisfying(TimestampOutOfToleranceException.class, e -> {
          assertThat(e.isFuture()).isFalse();
          assertThat(e.tolerance()).isEqualTo(Duration.ofMinutes(5));
          assertThat(e.timestamp()).isEqualTo(signedAt);
        })
        .hasMessage("standard-webhooks: timestamp 2021-02-25T15:02:10Z is behind the receiver's clock"
            + " 2021-02-25T15:07:11Z by PT5M1S, more than the tolerance PT5M");
    clock.set(signedAt.minus(Duration.ofMinutes(5).plusSeconds(1)));
    assertThatThrownBy(() -> verifier.verify(vector, PAYLOAD))
        .isInstanceOfSatisfying(TimestampOutOfToleranceException.class, e -> assertThat(e.isFuture()).isTrue());
  }

  @Test
  void configurableTolerance() throws Exception {
    CallbackVerifier strict = CallbackVerifier.builder().scheme(StandardWebhooksScheme.of(SECRET))
        .clock(clock).tolerance(Duration.ofSeconds(30)).build();
    clock.set(signedAt.plusSeconds(30));
    strict.verify(vector, PAYLOAD);
    clock.set(signedAt.plusSeconds(31));
    assertThatThrownBy(() -> strict.verify(vector, PAYLOAD)).isInstanceOf(TimestampOutOfToleranceException.class);
  }

  @Test
  void aForgeryIsASignatureMismatchEvenWhenItsTimestampIsAlsoStale() {
    clock.set(signedAt.plus(Duration.ofDays(3)));
    assertThatThrownBy(() -> verifier.verify(headers(ID, Long.toString(TIMESTAMP), "v1,AAAA"), PAYLOAD))
        .isInstanceOf(SignatureMismatchException.class);
  }

  @Test
  void builderValidates() {
    assertThatThrownBy(() -> CallbackVerifier.builder().build()).hasMessage("scheme: required");
    assertThatThrownBy(() -> CallbackVerifier.builder().scheme(StripeScheme.of("s"))
        .tolerance(Duration.ofMillis(500)).build()).hasMessage("tolerance: PT0.5S is outside 1 s..24 h");
    assertThatThrownBy(() -> CallbackVerifier.builder().scheme(StripeScheme.of("s"))
        .tolerance(Duration.ofHours(25)).build()).hasMessage("tolerance: PT25H is outside 1 s..24 h");
  }
}

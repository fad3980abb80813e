package io.github.resilienthttp.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.callbacks.testkit.CallbackSender.Kind;
import io.github.resilienthttp.callbacks.testkit.SenderReport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs the callback receiver example in-process (200 events, seed 42) and checks its counts. */
class CallbackReceiverExampleTest {
  private static CallbackReceiverExample.Result result;

  @BeforeAll
  static void run() throws Exception {
    result = CallbackReceiverExample.run(200, 42);
  }

  @Test
  void everyEventIsChargedExactlyOnce() {
    assertThat(result.charges()).isEqualTo(200);
    assertThat(result.chargedEvents()).isEqualTo(200);
    assertThat(result.duplicateCharges()).isZero();
    assertThat(result.report().unacknowledgedEvents()).isEmpty();
    assertThat(result.chargedOnce()).isTrue();
  }

  @Test
  void ledgerFailuresRolledBackTheirChargeAndWereRedelivered() {
    assertThat(result.ledgerFailures()).isEqualTo(20); // evt_0, evt_10, …, evt_190
    assertThat(result.handlerRuns()).isEqualTo(200 + 20);
    assertThat(result.report().finalStatuses()).doesNotContainKey(500);
  }

  @Test
  void hostileDeliveriesWereRejectedAndRotatedSecretsAccepted() {
    SenderReport s = result.report();
    assertThat(s.count(Kind.FORGED)).isPositive().isEqualTo(s.count(Kind.FORGED, 401));
    assertThat(s.count(Kind.STALE_REPLAY)).isPositive().isEqualTo(s.count(Kind.STALE_REPLAY, 400));
    assertThat(s.count(Kind.ROTATED_SECRET)).isPositive().isEqualTo(s.count(Kind.ROTATED_SECRET, 200));
    assertThat(s.count(Kind.DUPLICATE)).isPositive().isEqualTo(s.count(Kind.DUPLICATE, 200));
    assertThat(s.anyHostileAccepted()).isFalse();
  }
}

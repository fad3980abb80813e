package io.github.resilienthttp.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Runs the payments demo in-process, 100 operations against the server's faults for seed 42, and
 * checks the demo's claims from its counts rather than its printed table.
 */
class PaymentsDemoTest {
  private static final int OPERATIONS = 100;
  private static final long SEED = 42;

  private static DemoResult result;

  @BeforeAll
  static void runDemo() throws Exception {
    result = PaymentsDemo.run(OPERATIONS, SEED);
  }

  @Test
  void resilientClientChargesEveryOrderOnce() {
    ClientRun sdk = result.resilient();

    assertThat(sdk.operations()).isEqualTo(OPERATIONS);
    assertThat(sdk.outcomeUnknown()).isZero();
    assertThat(sdk.duplicateCharges()).isZero();
    assertThat(sdk.charges()).isEqualTo(sdk.succeeded());
  }

  @Test
  void resilientClientRetriedLostResponsesAndGotReplays() {
    ClientRun sdk = result.resilient();

    assertThat(sdk.retries()).isPositive();
    assertThat(sdk.replays()).isPositive();
    assertThat(sdk.attempts()).isEqualTo(sdk.operations() + sdk.retries());
  }

  @Test
  void resilientClientCountsEveryRequestTheServerSaw() {
    ClientRun sdk = result.resilient();

    assertThat(sdk.attempts()).isEqualTo(sdk.serverRequests());
  }

  @Test
  void naiveClientChargesSomeOrdersTwice() {
    ClientRun naive = result.naive();

    assertThat(naive.operations()).isEqualTo(OPERATIONS);
    assertThat(naive.replays()).isZero();
    assertThat(naive.duplicateCharges()).isPositive();
  }

  @Test
  void urlModeRefusesOtherSchemesAndCapsOperations() {
    assertThatThrownBy(() -> DemoOptions.parse("--url", "ftp://example.com/payments"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("http:// or https://");
    assertThatThrownBy(() -> DemoOptions.parse("--url", "https://example.com/p", "--operations",
        "1001"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1..1000");
    assertThat(DemoOptions.parse("--url", "https://example.com/p").operations())
        .isEqualTo(DemoOptions.DEFAULT_URL_OPERATIONS);
  }

  @Test
  void defaultsAreSeed42And300Operations() {
    DemoOptions options = DemoOptions.parse();

    assertThat(options.seed()).isEqualTo(42);
    assertThat(options.operations()).isEqualTo(300);
    assertThat(options.url()).isNull();
  }
}

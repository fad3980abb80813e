package io.github.resilienthttp.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
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

  @Test
  void urlModeExitsWithOneWhenEveryOperationFailedAndZeroWhenOneSucceeded() throws Exception {
    AtomicInteger requests = new AtomicInteger();
    // The first payment is created (201); every later one is refused (404, final: not retried).
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/payments", exchange -> {
      exchange.getRequestBody().readAllBytes();
      int status = requests.incrementAndGet() == 1 ? 201 : 404;
      exchange.sendResponseHeaders(status, -1);
      exchange.close();
    });
    server.start();
    try {
      HttpUrl url = HttpUrl.get("http://127.0.0.1:" + server.getAddress().getPort() + "/payments");
      ByteArrayOutputStream mixed = new ByteArrayOutputStream();
      assertThat(PaymentsDemo.runAgainst(url, 3, new PrintStream(mixed, true, StandardCharsets.UTF_8)))
          .isZero();
      assertThat(requests).hasValue(3);

      ByteArrayOutputStream failed = new ByteArrayOutputStream();
      assertThat(PaymentsDemo.runAgainst(url, 2, new PrintStream(failed, true, StandardCharsets.UTF_8)))
          .isEqualTo(1);
      assertThat(requests).hasValue(5);
      assertThat(failed.toString(StandardCharsets.UTF_8))
          .contains("HTTP 404 after 1 attempt", "no operation succeeded (no 2xx answer): exit code 1");
    } finally {
      server.stop(0);
    }
  }
}

package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What plain OkHttp does on its own with a {@code 503}, with the silent retries the SDK turns off
 * ({@code retryOnConnectionFailure(false)}) already off. These are the two reasons the SDK's clients
 * carry a network interceptor ({@code NetworkAttemptTracker}), whose chain level is the SDK's whole
 * GET cost over resilience4j's stack across a whole call (BENCHMARKS.md, "Seventeenth run").
 *
 * <p>No SDK code runs here. If an OkHttp upgrade makes a test fail, OkHttp has changed the fact it
 * pins: read the interceptor's Javadoc again, since that job may have moved upstream. The SDK's side
 * of each fact is tested in {@code CoreRetryTest#okHttpDoesNotSilentlyRepeat408Or503WithRetryAfterZero}
 * and {@code FaultMatrixTest}'s {@code S503_HUGE}.
 */
class OkHttpOwnFollowUpsTest {
  @RegisterExtension
  final LoopbackServer loopback = new LoopbackServer();

  private MockWebServer server;
  private OkHttpClient noSilentRetries;

  @BeforeEach
  void setUp() {
    server = loopback.server();
    // Shares the extension's pool and dispatcher, which it empties after each test.
    noSilentRetries = loopback.okHttp().newBuilder().retryOnConnectionFailure(false).build();
  }

  private Request get() {
    return new Request.Builder().url(server.url("/payments/1")).build();
  }

  /** The contrast: for a {@code 408}, OkHttp honours the setting (its pull request #3500). */
  @Test
  void a408IsNotRepeatedWhenSilentRetriesAreOff() throws Exception {
    server.enqueue(new MockResponse.Builder().code(408).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    try (Response r = noSilentRetries.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(408);
    }
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  /**
   * {@code RetryAndFollowUpInterceptor} repeats a {@code 503} with {@code Retry-After: 0} at once,
   * whatever {@code retryOnConnectionFailure} says (its pull request #3753). Only a network
   * interceptor sees that answer before the repeat; an event listener's {@code followUpDecision}
   * reports it after the decision, with the first answer's body already closed.
   */
  @Test
  void a503WithRetryAfterZeroIsRepeatedEvenWhenSilentRetriesAreOff() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "0").build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    try (Response r = noSilentRetries.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.priorResponse()).isNotNull();
      assertThat(r.priorResponse().code()).isEqualTo(503);
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  /**
   * The same code reads an all-digit {@code Retry-After} of a {@code 503} with
   * {@code Integer.valueOf}: past {@code Integer.MAX_VALUE} the call fails with a
   * {@link NumberFormatException} instead of returning the server's answer.
   */
  @Test
  void a503WithAnAllDigitRetryAfterBeyondIntFailsTheCall() {
    server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "99999999999").build());
    assertThatThrownBy(() -> noSilentRetries.newCall(get()).execute().close())
        .isInstanceOf(NumberFormatException.class)
        .hasMessageContaining("99999999999");
    assertThat(server.getRequestCount()).isEqualTo(1);
  }
}

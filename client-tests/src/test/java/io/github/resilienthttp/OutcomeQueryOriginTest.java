package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.LookupPaymentsServer;
import io.github.resilienthttp.testkit.LookupPaymentsServer.Submit;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The outcome query, a call the SDK makes on the caller's behalf, under the same origin rule: its
 * redirects may not leave the query URL's origin, so a redirect elsewhere sends the API key nowhere
 * and the outcome stays unknown (blocking and async).
 */
class OutcomeQueryOriginTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final LookupPaymentsServer payments = new LookupPaymentsServer();
  private final MockWebServer attacker = new MockWebServer();
  private final OkHttpClient okHttp = new OkHttpClient.Builder()
      .addNetworkInterceptor(chain -> chain.proceed(chain.request().newBuilder()
          .header("X-Api-Key", "key-secret").build()))
      .build();
  private final java.util.List<MockWebServer> redirectors = new java.util.ArrayList<>();
  private ResilientHttpClient client;

  @BeforeEach
  void setUp() throws Exception {
    attacker.start();
    client = ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
  }

  @AfterEach
  void tearDown() {
    payments.close();
    attacker.close();
    redirectors.forEach(MockWebServer::close);
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  private Operation charge(int redirect) {
    Request post = new Request.Builder().url(payments.url("/payments"))
        .post(RequestBody.create("{\"amount\":100,\"reference\":\"order-42\"}", JSON)).build();
    // The lookup answers with a redirect to another origin (a compromised or confused server).
    MockWebServer redirector = new MockWebServer();
    redirectors.add(redirector);
    try {
      redirector.start();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    redirector.enqueue(new MockResponse.Builder().code(redirect)
        .addHeader("Location", attacker.url("/lookup").toString()).build());
    OutcomeQueryPolicy q = OutcomeQueryPolicy.builder(
        OutcomeQuery.lookup((request, key) -> redirector.url("/lookup")))
        .graceDelay(Duration.ofMillis(1)).build();
    return client.operation(post).sendIdempotencyKey(false).outcomeQuery(q);
  }

  @ParameterizedTest
  @ValueSource(ints = {301, 302, 303, 307, 308})
  void aQueryRedirectedToAnotherOriginIsRefusedAndTheOutcomeStaysUnknown(int code)
      throws Exception {
    payments.script(Submit.CHARGE_THEN_DROP, Submit.CHARGE_THEN_DROP);
    Throwable blocking = catchThrowable(() -> charge(code).execute());
    assertThat(blocking).isInstanceOf(OutcomeUnknownException.class);
    assertThat(blocking.getSuppressed()).anySatisfy(s -> assertThat(
        ((OperationFailure) s).reason()).isEqualTo("other-origin"));
    Throwable async;
    try {
      charge(code).executeAsync().get(10, TimeUnit.SECONDS).close();
      async = null;
    } catch (ExecutionException e) {
      async = e.getCause();
    }
    assertThat(async).isInstanceOf(OutcomeUnknownException.class);
    assertThat(attacker.getRequestCount()).isZero();
  }
}

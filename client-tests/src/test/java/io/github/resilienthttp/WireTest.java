package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * "Sent" is decided on the wire: an attempt may have reached the server only once OkHttp started
 * writing the request ({@code EventListener.requestHeadersStart}). Before that (a user network
 * interceptor that throws, a connection that cannot be made) nothing was sent, for any method.
 * On HTTP/1.1 and HTTP/2.
 */
class WireTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private MockWebServer server;
  private OkHttpClient okHttp;

  @AfterEach
  void tearDown() {
    if (okHttp != null) {
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }
    if (server != null) {
      server.close();
    }
  }

  private void start(String protocol, Interceptor networkInterceptor) throws IOException {
    Protocol p = Protocol.get(protocol);
    server = new MockWebServer();
    server.setProtocols(p == Protocol.HTTP_1_1 ? List.of(Protocol.HTTP_1_1) : List.of(p));
    server.start();
    OkHttpClient.Builder b = new OkHttpClient.Builder()
        .protocols(p == Protocol.HTTP_1_1 ? List.of(Protocol.HTTP_1_1) : List.of(p));
    if (networkInterceptor != null) {
      b.addNetworkInterceptor(networkInterceptor);
    }
    okHttp = b.build();
  }

  private ResilientHttpClient client() {
    return ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
        .random(new SplittableRandom(1))
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .build();
  }

  private Request post(String url) {
    return new Request.Builder().url(url).post(RequestBody.create("{\"a\":1}", JSON)).build();
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void failingSigningInterceptorIsNotSentAndNotABreakerFailure(String protocol) throws Exception {
    start(protocol, chain -> {
      throw new IOException("signing key unavailable");
    });
    ResilientHttpClient client = client();
    Operation op = client.operation(post(server.url("/payments").toString()))
        .sendIdempotencyKey(false);
    assertThatThrownBy(op::execute)
        .isInstanceOf(RetriesExhaustedException.class)
        .isNotInstanceOf(OutcomeUnknownException.class)
        .satisfies(e -> assertThat(((ResilientHttpException) e).attempts()).isEqualTo(3));
    assertThat(server.getRequestCount()).isZero();
    CircuitBreaker breaker = client.circuitBreakerFor(server.url("/")).orElseThrow();
    assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void signingThatFailsOnceIsRetriedForAKeylessPost(String protocol) throws Exception {
    AtomicInteger calls = new AtomicInteger();
    start(protocol, chain -> {
      if (calls.incrementAndGet() == 1) {
        throw new IOException("clock skew, re-sign");
      }
      return chain.proceed(chain.request());
    });
    server.enqueue(new MockResponse.Builder().code(201).build());
    Operation op = client().operation(post(server.url("/payments").toString()))
        .sendIdempotencyKey(false);
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(op.attempts()).isEqualTo(2);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void failingSigningOnAPlainCallIsNotSent(String protocol) throws Exception {
    start(protocol, chain -> {
      throw new IOException("signing key unavailable");
    });
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .timeSource(new FakeTimeSource())
        .idempotencyKeys(IdempotencyKeyPolicy.builder()
            .send(IdempotencyKeyPolicy.Send.NEVER).build()).build();
    assertThatThrownBy(() -> client.okHttpClient()
        .newCall(post(server.url("/payments").toString())).execute())
        .isInstanceOf(RetriesExhaustedException.class)
        .isNotInstanceOf(OutcomeUnknownException.class);
    assertThat(server.getRequestCount()).isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void connectionRefusedBeforeTheWriteIsNotSent(String protocol) throws Exception {
    start(protocol, null);
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    Operation op = client().operation(post("http://127.0.0.1:" + closedPort + "/payments"))
        .sendIdempotencyKey(false);
    assertThatThrownBy(op::execute)
        .isInstanceOf(RetriesExhaustedException.class)
        .isNotInstanceOf(OutcomeUnknownException.class);
    assertThat(op.attempts()).isEqualTo(3);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void lostAnswerAfterTheWriteStaysOutcomeUnknown(String protocol) throws Exception {
    start(protocol, null);
    server.enqueue(new MockResponse.Builder()
        .onResponseStart(new mockwebserver3.SocketEffect.CloseSocket()).build());
    Operation op = client().operation(post(server.url("/payments").toString()))
        .sendIdempotencyKey(false);
    assertThatThrownBy(op::execute).isInstanceOf(OutcomeUnknownException.class);
    assertThat(server.takeRequest(5, TimeUnit.SECONDS)).isNotNull();
  }
}

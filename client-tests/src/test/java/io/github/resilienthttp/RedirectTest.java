package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
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
 * Redirects, which OkHttp follows inside one attempt: a redirect loop is permanent (retrying loops
 * again); the key goes with a 307/308 (same method and body, also to another origin, which needs
 * the key to recognise a repeat of the same intent) and not with the GET after a 303 (or a POST's
 * 301/302), which fetches a result rather than repeating the intent. On HTTP/1.1 and HTTP/2.
 */
class RedirectTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private MockWebServer server;
  private MockWebServer other;
  private OkHttpClient okHttp;

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
    if (other != null) {
      other.close();
    }
  }

  private ResilientHttpClient start(String protocol) throws IOException {
    Protocol p = Protocol.get(protocol);
    server = new MockWebServer();
    server.setProtocols(List.of(p));
    server.start();
    other = new MockWebServer();
    other.setProtocols(List.of(p));
    other.start();
    okHttp = new OkHttpClient.Builder().protocols(List.of(p)).build();
    return ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
        .random(new SplittableRandom(1))
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .build();
  }

  private Request post(String path) {
    return new Request.Builder().url(server.url(path))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  private static MockResponse redirect(int code, String location) {
    return new MockResponse.Builder().code(code).addHeader("Location", location).build();
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void redirectLoopIsPermanentNotRetried(String protocol) throws Exception {
    ResilientHttpClient client = start(protocol);
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return redirect(307, "/loop");
      }
    });
    Operation op = client.operation(post("/loop"));
    assertThatThrownBy(op::execute)
        .isInstanceOf(ResilientHttpException.class)
        .isNotInstanceOf(OutcomeUnknownException.class)
        .isNotInstanceOf(RetriesExhaustedException.class)
        .satisfies(e -> assertThat(((ResilientHttpException) e).reason())
            .isEqualTo("too-many-follow-ups"))
        .hasRootCauseInstanceOf(java.net.ProtocolException.class);
    assertThat(op.attempts()).isEqualTo(1);
    // OkHttp's own limit: the request and 20 follow-ups, once (it was 63 with three attempts).
    assertThat(server.getRequestCount()).isEqualTo(21);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void noKeyOnTheGetAfterA303(String protocol) throws Exception {
    ResilientHttpClient client = start(protocol);
    server.enqueue(redirect(303, "/orders/7"));
    server.enqueue(new MockResponse.Builder().code(200).body("order 7").build());
    Operation op = client.operation(post("/orders"));
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    RecordedRequest first = server.takeRequest(5, TimeUnit.SECONDS);
    RecordedRequest followUp = server.takeRequest(5, TimeUnit.SECONDS);
    assertThat(first.getMethod()).isEqualTo("POST");
    assertThat(first.getHeaders().get("Idempotency-Key")).isEqualTo(op.idempotencyKey());
    assertThat(followUp.getMethod()).isEqualTo("GET");
    assertThat(followUp.getHeaders().get("Idempotency-Key")).isNull();
    assertThat(op.networkRequests()).isEqualTo(2);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void noKeyOnTheGetAfterAPostWas302d(String protocol) throws Exception {
    ResilientHttpClient client = start(protocol);
    server.enqueue(redirect(302, "/orders/7"));
    server.enqueue(new MockResponse.Builder().code(200).body("order 7").build());
    client.operation(post("/orders")).execute().close();
    server.takeRequest(5, TimeUnit.SECONDS);
    RecordedRequest followUp = server.takeRequest(5, TimeUnit.SECONDS);
    assertThat(followUp.getMethod()).isEqualTo("GET");
    assertThat(followUp.getHeaders().get("Idempotency-Key")).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"http/1.1", "h2_prior_knowledge"})
  void keyFollows307And308ToAnotherOrigin(String protocol) throws Exception {
    ResilientHttpClient client = start(protocol);
    for (int code : new int[] {307, 308}) {
      server.enqueue(redirect(code, other.url("/v2/payments").toString()));
      other.enqueue(new MockResponse.Builder().code(201).build());
      Operation op = client.operation(post("/payments"));
      try (Response r = op.execute()) {
        assertThat(r.code()).isEqualTo(201);
      }
      RecordedRequest atOrigin = server.takeRequest(5, TimeUnit.SECONDS);
      RecordedRequest atOther = other.takeRequest(5, TimeUnit.SECONDS);
      assertThat(atOrigin.getHeaders().get("Idempotency-Key")).isEqualTo(op.idempotencyKey());
      assertThat(atOther.getMethod()).isEqualTo("POST");
      assertThat(atOther.getBody().utf8()).isEqualTo("{\"amount\":100}");
      assertThat(atOther.getHeaders().get("Idempotency-Key")).as("after %d", code)
          .isEqualTo(op.idempotencyKey());
    }
  }
}

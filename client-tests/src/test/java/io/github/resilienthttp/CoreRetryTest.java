package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The core retry rules on real loopback sockets, with scripted MockWebServer 3 responses. */
class CoreRetryTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private MockWebServer server;
  private OkHttpClient okHttp;
  private FakeTimeSource time;

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient.Builder().build();
    time = new FakeTimeSource();
  }

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient.Builder client() {
    return ResilientHttpClient.wrap(okHttp).timeSource(time).random(new SplittableRandom(1));
  }

  private RetryPolicy.Builder policy() {
    return RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(100)));
  }

  private Request post() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"amount\":100}", JSON)).build();
  }

  private Request get() {
    return new Request.Builder().url(server.url("/payments/1")).build();
  }

  private static MockResponse status(int code) {
    return new MockResponse.Builder().code(code).body("status " + code).build();
  }

  private static MockResponse lostResponse() {
    return new MockResponse.Builder().onResponseStart(new SocketEffect.CloseSocket()).build();
  }

  private List<RecordedRequest> taken(int n) throws InterruptedException {
    List<RecordedRequest> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(server.takeRequest(5, TimeUnit.SECONDS));
    }
    return out;
  }

  @Test
  void sameKeyOnEveryAttemptAndANewKeyForTheNextOperation() throws Exception {
    server.enqueue(status(503));
    server.enqueue(status(503));
    server.enqueue(status(201));
    server.enqueue(status(201));
    ResilientHttpClient client = client().retryPolicy(policy().maxAttempts(3).build()).build();

    Operation first = client.operation(post());
    String key = first.idempotencyKey();
    try (Response r = first.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    Operation second = client.operation(post());
    try (Response r = second.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }

    List<RecordedRequest> requests = taken(4);
    assertThat(requests).extracting(rr -> rr.getHeaders().get("Idempotency-Key"))
        .containsExactly(key, key, key, second.idempotencyKey());
    assertThat(second.idempotencyKey()).isNotEqualTo(key);
    assertThat(first.attempts()).isEqualTo(3);
    assertThat(first.networkRequests()).isEqualTo(3);
    assertThat(server.getRequestCount()).isEqualTo(4);
    assertThat(time.sleeps()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(100));
  }

  @Test
  void getSendsNoKeyByDefaultButPostDoes() throws Exception {
    server.enqueue(status(200));
    ResilientHttpClient client = client().build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isNull();
  }

  @Test
  void callerKeyIsUsedVerbatimAndARequestHeaderIsNeverOverwritten() throws Exception {
    server.enqueue(status(201));
    server.enqueue(status(201));
    ResilientHttpClient client = client().build();
    client.operation(post()).idempotencyKey("order-42:charge").execute().close();
    Request withHeader = post().newBuilder().header("Idempotency-Key", "mine-7").build();
    Operation op = client.operation(withHeader);
    assertThat(op.idempotencyKey()).isEqualTo("mine-7");
    op.execute().close();

    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo("order-42:charge");
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo("mine-7");
    assertThatThrownBy(() -> client.operation(withHeader).idempotencyKey("other"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("different key");
  }

  @Test
  void invalidCallerKeysFailAtOnceNamingTheRule() {
    ResilientHttpClient client = client().build();
    assertThatThrownBy(() -> client.operation(post()).idempotencyKey("has space"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("visible ASCII");
    assertThatThrownBy(() -> client.operation(post()).idempotencyKey("x".repeat(256)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1..255");
    assertThat(server.getRequestCount()).isZero();
  }

  @Test
  void structuredStringFormatQuotesTheKeyAndCustomHeaderName() throws Exception {
    server.enqueue(status(201));
    ResilientHttpClient client = client().idempotencyKeys(IdempotencyKeyPolicy.builder()
        .headerName("X-Idempotency-Key").format(IdempotencyKeyPolicy.Format.STRUCTURED_STRING).build())
        .build();
    Operation op = client.operation(post());
    op.execute().close();
    RecordedRequest rr = server.takeRequest();
    assertThat(rr.getHeaders().get("X-Idempotency-Key")).isEqualTo("\"" + op.idempotencyKey() + "\"");
    assertThat(rr.getHeaders().get("Idempotency-Key")).isNull();
  }

  @Test
  void keyCanBeForcedOnForGetAndOffForPost() throws Exception {
    server.enqueue(status(200));
    server.enqueue(status(201));
    ResilientHttpClient client = client().build();
    Operation get = client.operation(get()).sendIdempotencyKey(true);
    get.execute().close();
    client.operation(post()).sendIdempotencyKey(false).execute().close();
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(get.idempotencyKey());
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isNull();
  }

  @Test
  void lostResponseOnPostWithKeyIsRetriedWithTheSameKey() throws Exception {
    server.enqueue(lostResponse());
    server.enqueue(status(201));
    ResilientHttpClient client = client().build();
    Operation op = client.operation(post());
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    List<RecordedRequest> rr = taken(2);
    assertThat(rr).extracting(x -> x.getHeaders().get("Idempotency-Key"))
        .containsOnly(op.idempotencyKey());
    assertThat(op.attempts()).isEqualTo(2);
  }

  @Test
  void lostResponseOnPostWithoutKeyIsOutcomeUnknownAndNotRetried() throws Exception {
    server.enqueue(lostResponse());
    server.enqueue(status(201));
    ResilientHttpClient client = client().build();
    Operation op = client.operation(post()).sendIdempotencyKey(false);

    assertThatThrownBy(op::execute)
        .isInstanceOfSatisfying(OutcomeUnknownException.class, e -> {
          assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
          assertThat(e.idempotencyKeySent()).isFalse();
          assertThat(e.attempts()).isEqualTo(1);
          assertThat(e.statusCode()).isEqualTo(-1);
          assertThat(e.reason()).isEqualTo("outcome-unknown");
          assertThat(e.getCause()).isInstanceOf(IOException.class);
          assertThat(e.getMessage()).doesNotContain(op.idempotencyKey())
              .contains(op.idempotencyKey().substring(0, 8));
        });
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertThat(time.sleeps()).isEmpty();
  }

  @Test
  void status500OnPostWithoutKeyIsOutcomeUnknownWithTheStatus() throws Exception {
    server.enqueue(status(500));
    ResilientHttpClient client = client().build();
    Operation op = client.operation(post()).sendIdempotencyKey(false);
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(OutcomeUnknownException.class,
        e -> assertThat(e.statusCode()).isEqualTo(500));
    assertThat(server.getRequestCount()).isEqualTo(1);
    assertIdleConnectionsOnly();
  }

  @Test
  void status500OnGetIsRetriedAndTheLastResponseReturnedWhenAttemptsRunOut() throws Exception {
    server.enqueue(status(500));
    server.enqueue(status(502));
    server.enqueue(status(504));
    ResilientHttpClient client = client().retryPolicy(policy().maxAttempts(3).build()).build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(504);
      assertThat(r.body().string()).isEqualTo("status 504");
    }
    assertThat(op.attempts()).isEqualTo(3);
    assertThat(server.getRequestCount()).isEqualTo(3);
    assertIdleConnectionsOnly();
  }

  @Test
  void permanentFailuresReturnAtOnce() throws Exception {
    server.enqueue(status(404));
    server.enqueue(status(422));
    ResilientHttpClient client = client().build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(404);
    }
    try (Response r = client.operation(post()).execute()) {
      assertThat(r.code()).isEqualTo(422);
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(time.sleeps()).isEmpty();
  }

  @Test
  void conflictInProgressIsRetriedAfterBackoff() throws Exception {
    // "In progress" only when the answer says so: here a problem type naming the key.
    server.enqueue(new MockResponse.Builder().code(409)
        .addHeader("Content-Type", "application/problem+json")
        .body("{\"type\":\"https://example.com/problems/idempotency-key-in-use\"}").build());
    server.enqueue(status(201));
    ResilientHttpClient client = client().retryPolicy(policy().build()).build();
    Operation op = client.operation(post());
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(op.attempts()).isEqualTo(2);
    assertThat(time.sleeps()).containsExactly(Duration.ofMillis(100));
  }

  @Test
  void retryAfterDeltaSecondsIsHonoured() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "2").build());
    server.enqueue(status(200));
    ResilientHttpClient client = client().build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(time.sleeps()).containsExactly(Duration.ofSeconds(2));
  }

  @Test
  void retryAfterHttpDateIsHonouredNeverEarly() throws Exception {
    // Three seconds after the fake clock's now, with 250 ms already elapsed: wait 2.75 s.
    time.advance(Duration.ofMillis(250));
    String date = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
        .withZone(ZoneOffset.UTC).format(time.now().minusMillis(250).plusSeconds(3));
    server.enqueue(new MockResponse.Builder().code(429).setHeader("Retry-After", date).build());
    server.enqueue(status(200));
    ResilientHttpClient client = client().build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(time.sleeps()).containsExactly(Duration.ofMillis(2750));
  }

  @Test
  void retryAfterShorterThanBackoffDoesNotShortenTheBackoff() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "0").build());
    server.enqueue(status(200));
    client().retryPolicy(policy().build()).build().operation(get()).execute().close();
    assertThat(time.sleeps()).containsExactly(Duration.ofMillis(100));
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  @Test
  void malformedRetryAfterIsIgnored() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "soon-ish").build());
    server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "-5").build());
    server.enqueue(status(200));
    ResilientHttpClient client = client().retryPolicy(policy().build()).build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(time.sleeps()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(100));
  }

  @Test
  void retryAfterPastTheDeadlineStopsAtOnceWithoutSleeping() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "20").build());
    ResilientHttpClient client = client()
        .retryPolicy(policy().deadline(Duration.ofSeconds(10)).maxRetryAfter(Duration.ofMinutes(5)).build())
        .build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(time.sleeps()).isEmpty();
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void hugeRetryAfterAboveTheCapStopsAtOnce() throws Exception {
    server.enqueue(new MockResponse.Builder().code(429).setHeader("Retry-After", "99999999999999").build());
    ResilientHttpClient client = client().build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(429);
    }
    assertThat(time.sleeps()).isEmpty();
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void connectFailureIsNotSentAndRetriedForAnyMethod() throws Exception {
    int closedPort;
    try (MockWebServer closed = new MockWebServer()) {
      closed.start();
      closedPort = closed.getPort();
    }
    ResilientHttpClient client = client().retryPolicy(policy().maxAttempts(3).build()).build();
    Request request = post().newBuilder().url("http://127.0.0.1:" + closedPort + "/payments").build();
    Operation op = client.operation(request).sendIdempotencyKey(false);
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(RetriesExhaustedException.class, e -> {
      assertThat(e.attempts()).isEqualTo(3);
      assertThat(e.reason()).isEqualTo("attempts-exhausted");
      assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
    });
    assertThat(op.networkRequests()).isZero();
    assertThat(time.sleeps()).hasSize(2);
  }

  @Test
  void oneShotBodyIsNeverSentTwice() throws Exception {
    server.enqueue(lostResponse());
    server.enqueue(status(201));
    ResilientHttpClient client = client().build();
    Operation op = client.operation(post().newBuilder().post(new OneShotBody()).build());
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(OutcomeUnknownException.class,
        e -> assertThat(e.reason()).isEqualTo("one-shot-body"));
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void customContractComposesWithTheDefaults() throws Exception {
    server.enqueue(status(418));
    server.enqueue(new MockResponse.Builder().code(200).setHeader("X-Status", "busy").build());
    server.enqueue(status(200));
    ResponseClassifier teapotAndBusy = o -> {
      if (o.statusCode() == 418) {
        return Decision.retry("teapot");
      }
      if (o.response().map(r -> "busy".equals(r.header("X-Status"))).orElse(false)) {
        return Decision.retry("busy-header");
      }
      return Decision.defer();
    };
    ResilientHttpClient client = client().classifier(teapotAndBusy.orElse(ResponseClassifier.defaults())).build();
    Operation op = client.operation(get());
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.header("X-Status")).isNull();
    }
    assertThat(op.attempts()).isEqualTo(3);
  }

  @Test
  void okHttpDoesNotSilentlyRepeat408Or503WithRetryAfterZero() throws Exception {
    server.enqueue(status(408));
    server.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "0").build());
    server.enqueue(status(200));
    server.enqueue(status(200));
    ResilientHttpClient client = client().retryPolicy(policy().maxAttempts(1).build()).build();
    Operation first = client.operation(get());
    try (Response r = first.execute()) {
      assertThat(r.code()).isEqualTo(408);
    }
    Operation second = client.operation(get());
    try (Response r = second.execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(first.networkRequests() + second.networkRequests()).isEqualTo(2);
  }

  @Test
  void usersApplicationInterceptorsRunOncePerAttempt() throws Exception {
    AtomicInteger seen = new AtomicInteger();
    OkHttpClient withInterceptor = okHttp.newBuilder()
        .addInterceptor(chain -> {
          seen.incrementAndGet();
          return chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer t" + seen.get()).build());
        }).build();
    server.enqueue(status(503));
    server.enqueue(status(200));
    ResilientHttpClient client = ResilientHttpClient.wrap(withInterceptor).timeSource(time).build();
    client.operation(get()).execute().close();
    assertThat(seen.get()).isEqualTo(2);
    assertThat(taken(2)).extracting(rr -> rr.getHeaders().get("Authorization"))
        .containsExactly("Bearer t1", "Bearer t2");
  }

  @Test
  void anOperationRunsOnce() throws Exception {
    server.enqueue(status(200));
    Operation op = client().build().operation(get());
    op.execute().close();
    assertThatThrownBy(op::execute).isInstanceOf(IllegalStateException.class).hasMessageContaining("runs once");
    assertThatThrownBy(() -> op.deadline(Duration.ofSeconds(1))).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theWrappedClientIsNotModifiedAndSharesItsPool() throws Exception {
    server.enqueue(status(503));
    server.enqueue(status(200));
    ResilientHttpClient client = client().build();
    assertThat(okHttp.interceptors()).isEmpty();
    client.operation(get()).execute().close();
    assertThat(okHttp.connectionPool().connectionCount()).isEqualTo(1);
    assertThat(client.wrappedClient()).isSameAs(okHttp);
  }

  @Test
  void newBuilderDerivesAClientThatSharesBudgetAndBreakers() throws Exception {
    server.enqueue(status(200));
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).build();
    ResilientHttpClient derived = client.newBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(7).build()).build();
    assertThat(derived.retryPolicy().maxAttempts()).isEqualTo(7);
    assertThat(derived.retryBudget()).isSameAs(client.retryBudget());
    assertThat(derived.circuitBreakerFor(server.url("/")).orElseThrow())
        .isSameAs(client.circuitBreakerFor(server.url("/x")).orElseThrow());
    derived.operation(get()).execute().close();
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void anAbsurdBackoffStopsAtTheDeadlineInsteadOfOverflowing() throws Exception {
    server.enqueue(status(503));
    ResilientHttpClient client = client()
        .retryPolicy(policy().backoff(Backoff.fixed(Duration.ofDays(365L * 1_000_000))).build()).build();
    try (Response r = client.operation(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(time.sleeps()).isEmpty();
    assertIdleConnectionsOnly();
  }

  @Test
  void theKeyOfAnOperationIsStableWhetherReadBeforeDuringOrAfterExecution() throws Exception {
    server.enqueue(status(404));
    ResilientHttpClient client = client().build();
    Operation get = client.operation(get());
    get.execute().close();
    String afterwards = get.idempotencyKey();
    assertThat(java.util.UUID.fromString(afterwards).version()).isEqualTo(4);
    assertThat(get.idempotencyKey()).isEqualTo(afterwards);
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isNull();

    int closedPort;
    try (MockWebServer closed = new MockWebServer()) {
      closed.start();
      closedPort = closed.getPort();
    }
    Operation failing = client.operation(new Request.Builder().url("http://127.0.0.1:" + closedPort + "/").build());
    assertThatThrownBy(failing::execute).isInstanceOfSatisfying(RetriesExhaustedException.class,
        e -> assertThat(e.idempotencyKey()).isEqualTo(failing.idempotencyKey()));
  }

  private void assertIdleConnectionsOnly() {
    assertThat(okHttp.connectionPool().connectionCount())
        .isEqualTo(okHttp.connectionPool().idleConnectionCount());
  }

  /** A body that can be written once, like a stream. */
  private static final class OneShotBody extends RequestBody {
    @Override
    public MediaType contentType() {
      return JSON;
    }

    @Override
    public boolean isOneShot() {
      return true;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      sink.writeUtf8("{\"amount\":100}");
    }
  }
}

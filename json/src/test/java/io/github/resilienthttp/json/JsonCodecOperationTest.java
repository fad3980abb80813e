package io.github.resilienthttp.json;

import static io.github.resilienthttp.json.JsonCodecTest.jsonResponse;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.type.TypeReference;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import mockwebserver3.MockResponse;
import mockwebserver3.MockResponseBody;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link JsonCodec#execute}: an operation's final response, as a value or an exception. */
class JsonCodecOperationTest {
  record Payment(String id, long amount, String currency) {}

  record CreatePayment(long amount, String currency) {}

  private static final String NOT_FOUND_PROBLEM = "{"
      + "\"type\":\"https://api.example.com/problems/payment-not-found\","
      + "\"title\":\"Payment not found\","
      + "\"status\":404,"
      + "\"detail\":\"No payment p-404 for account acct_secret_123\","
      + "\"instance\":\"/payments/p-404\","
      + "\"paymentId\":\"p-404\"}";

  private final MockWebServer server = new MockWebServer();
  private final AtomicBoolean stopStreaming = new AtomicBoolean();
  private final OkHttpClient okHttp = new OkHttpClient();
  private final JsonCodec json = JsonCodec.create();
  private ResilientHttpClient client;

  @BeforeEach
  void start() throws IOException {
    server.start();
    client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).build())
        .build();
  }

  @AfterEach
  void stop() {
    stopStreaming.set(true);
    server.close();
    okHttp.connectionPool().evictAll();
  }

  @Test
  void successfulOperationReturnsTheTypedValue() throws Exception {
    server.enqueue(jsonResponse(201, "{\"id\":\"p-1\",\"amount\":1250,\"currency\":\"EUR\"}"));
    Operation op = client.operation(post("/payments", new CreatePayment(1250, "EUR")));

    Payment payment = json.execute(op, Payment.class);

    assertThat(payment).isEqualTo(new Payment("p-1", 1250, "EUR"));
    RecordedRequest seen = server.takeRequest();
    assertThat(seen.getBody().utf8()).isEqualTo("{\"amount\":1250,\"currency\":\"EUR\"}");
    assertThat(seen.getHeaders().get("Idempotency-Key")).isEqualTo(op.idempotencyKey());
    assertThat(okHttp.connectionPool().idleConnectionCount()).isEqualTo(1);
  }

  @Test
  void typeReferenceVariantReadsAList() throws Exception {
    server.enqueue(jsonResponse(200, "[{\"id\":\"p-1\",\"amount\":1,\"currency\":\"EUR\"},"
        + "{\"id\":\"p-2\",\"amount\":2,\"currency\":\"USD\"}]"));

    List<Payment> payments = json.execute(
        client.operation(new Request.Builder().url(server.url("/payments")).build()),
        new TypeReference<List<Payment>>() {});

    assertThat(payments).containsExactly(
        new Payment("p-1", 1, "EUR"), new Payment("p-2", 2, "USD"));
  }

  @Test
  void problemJson404BecomesHttpStatusExceptionWithTheProblemAndTheKey() throws Exception {
    server.enqueue(new MockResponse.Builder().code(404)
        .setHeader("Content-Type", "application/problem+json")
        .setHeader("Set-Cookie", "session=cookie_secret_456")
        .body(NOT_FOUND_PROBLEM).build());
    Operation op = client.operation(post("/payments/p-404/capture", new CreatePayment(1, "EUR")));

    HttpStatusException e = catchThrowableOfType(HttpStatusException.class,
        () -> json.execute(op, Payment.class));

    assertThat(e.statusCode()).isEqualTo(404);
    assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
    assertThat(e.idempotencyKeySent()).isTrue();
    assertThat(e.attempts()).isEqualTo(1);
    assertThat(e.reason()).isEqualTo("status-404");
    assertThat(e.headers().get("Set-Cookie")).isEqualTo("session=cookie_secret_456");
    ProblemDetails problem = e.problem().orElseThrow();
    assertThat(problem.type()).isEqualTo("https://api.example.com/problems/payment-not-found");
    assertThat(problem.title()).contains("Payment not found");
    assertThat(problem.status()).contains(404);
    assertThat(problem.detail()).contains("No payment p-404 for account acct_secret_123");
    assertThat(problem.instance()).contains("/payments/p-404");
    assertThat(problem.extensions()).isEqualTo(Map.of("paymentId", "p-404"));
    assertThat(e.getMessage()).isEqualTo("HTTP 404 (problem type="
        + "https://api.example.com/problems/payment-not-found, title=\"Payment not found\") [key="
        + op.idempotencyKey().substring(0, 8) + "…, attempts=1, reason=status-404]");
    assertThat(e.getMessage()).doesNotContain("secret");
    assertThat(okHttp.connectionPool().connectionCount())
        .isEqualTo(okHttp.connectionPool().idleConnectionCount());
  }

  @Test
  void non2xxWithAPlainBodyHasNoProblem() throws Exception {
    // 500 is retried for an idempotent GET; the second 500 is final.
    server.enqueue(new MockResponse.Builder().code(500)
        .setHeader("Content-Type", "text/html").body("<h1>oops</h1>").build());
    server.enqueue(new MockResponse.Builder().code(500)
        .setHeader("Content-Type", "application/json").body("{\"title\":\"not a problem\"}").build());
    Operation op = client.operation(new Request.Builder().url(server.url("/payments/p-1")).build());

    HttpStatusException e = catchThrowableOfType(HttpStatusException.class,
        () -> json.execute(op, Payment.class));

    assertThat(e.statusCode()).isEqualTo(500);
    assertThat(e.problem()).isEmpty();
    assertThat(e.attempts()).isEqualTo(2);
    assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
    assertThat(e.idempotencyKeySent()).isFalse();
    assertThat(e.getMessage()).isEqualTo("HTTP 500 [key=" + op.idempotencyKey().substring(0, 8)
        + "…, attempts=2, reason=status-500]");
  }

  @Test
  void malformedSuccessBodyCarriesTheKeyAndTheJsonCause() throws Exception {
    server.enqueue(jsonResponse(201, "{\"id\":"));
    Operation op = client.operation(post("/payments", new CreatePayment(1, "EUR")));

    ResilientHttpException e = catchThrowableOfType(ResilientHttpException.class,
        () -> json.execute(op, Payment.class));

    assertThat(e.reason()).isEqualTo("json-unreadable");
    assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
    assertThat(e.getCause()).isExactlyInstanceOf(JsonBodyException.class);
    assertThat(e.getMessage()).isEqualTo("the HTTP 201 response body is not well-formed JSON for"
        + " io.github.resilienthttp.json.JsonCodecOperationTest$Payment (JsonEOFException at line 1,"
        + " column 7) [key=" + op.idempotencyKey().substring(0, 8)
        + "…, attempts=1, reason=json-unreadable]");
    assertThat(okHttp.connectionPool().connectionCount()).isEqualTo(1);
    assertThat(okHttp.connectionPool().idleConnectionCount()).isEqualTo(1);
  }

  @Test
  void twoMebibyteBodyOverTheOneMebibyteCapFailsWithTheKey() throws Exception {
    String twoMiB = "[" + "0,".repeat(1024 * 1024 - 1) + "0]";
    server.enqueue(new MockResponse.Builder().code(200).chunkedBody(twoMiB, 16 * 1024).build());
    Operation op = client.operation(new Request.Builder().url(server.url("/export")).build());

    ResilientHttpException e = catchThrowableOfType(ResilientHttpException.class,
        () -> json.execute(op, new TypeReference<List<Integer>>() {}));

    assertThat(e.reason()).isEqualTo("body-too-large");
    assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
    JsonBodyTooLargeException cause = (JsonBodyTooLargeException) e.getCause();
    assertThat(cause.limitBytes()).isEqualTo(1_048_576);
    assertThat(cause.contentLength()).isEqualTo(-1);
    awaitNoConnectionInUse();
  }

  @Test
  void endlessThrottledBodyEndsAtTheOperationDeadline() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200)
        .setHeader("Content-Type", "application/json")
        .body(endlessJsonArray())
        .throttleBody(64, 20, TimeUnit.MILLISECONDS)
        .build());
    Operation op = client.operation(new Request.Builder().url(server.url("/stream")).build())
        .deadline(Duration.ofMillis(500));

    long start = System.nanoTime();
    DeadlineExceededException e = catchThrowableOfType(DeadlineExceededException.class,
        () -> json.execute(op, new TypeReference<List<Integer>>() {}));
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(elapsedMillis).isBetween(400L, 2_000L);
    assertThat(e.reason()).isEqualTo("deadline");
    assertThat(e.idempotencyKey()).isEqualTo(op.idempotencyKey());
    assertThat(e.attempts()).isEqualTo(1);
    assertThat(e.getMessage()).isEqualTo("deadline passed while reading the response body [key="
        + op.idempotencyKey().substring(0, 8) + "…, attempts=1, reason=deadline]");
    awaitNoConnectionInUse();
  }

  @Test
  void classifierRetriesOnTheProblemTypeAndTheBodyStaysReadable() throws Exception {
    ResponseClassifier contract = ((ResponseClassifier) outcome -> ProblemDetails.from(outcome)
        .filter(p -> p.type().endsWith("/idempotency-key-in-use"))
        .map(p -> Decision.retry("idempotency-key-in-use", outcome.retryAfter()))
        .orElse(Decision.defer()))
        .orElse(ResponseClassifier.defaults());
    ResilientHttpClient withContract = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).build())
        .classifier(contract)
        .build();
    server.enqueue(new MockResponse.Builder().code(400)
        .setHeader("Content-Type", "application/problem+json")
        .body("{\"type\":\"https://api.example.com/problems/idempotency-key-in-use\"}").build());
    server.enqueue(new MockResponse.Builder().code(400)
        .setHeader("Content-Type", "application/problem+json")
        .body("{\"type\":\"https://api.example.com/problems/invalid-currency\","
            + "\"title\":\"Invalid currency\"}").build());
    Operation op = withContract.operation(post("/payments", new CreatePayment(1, "XXX")));

    HttpStatusException e = catchThrowableOfType(HttpStatusException.class,
        () -> json.execute(op, Payment.class));

    // The classifier peeked at the second body, and the codec could still read it afterwards.
    assertThat(e.attempts()).isEqualTo(2);
    assertThat(e.problem().orElseThrow().type())
        .isEqualTo("https://api.example.com/problems/invalid-currency");
    assertThat(e.problem().orElseThrow().title()).contains("Invalid currency");
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(op.idempotencyKey());
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(op.idempotencyKey());
  }

  private Request post(String path, Object body) {
    return new Request.Builder().url(server.url(path)).post(json.body(body)).build();
  }

  /** {@code [0,0,0,...} forever: chunked, never complete, until the client hangs up. */
  private MockResponseBody endlessJsonArray() {
    return new MockResponseBody() {
      @Override
      public long getContentLength() {
        return -1;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        sink.writeUtf8("[0");
        while (!stopStreaming.get()) {
          sink.writeUtf8(",0");
          sink.flush();
        }
      }
    };
  }

  /** The connection was given back or dropped, not leaked to a half-read body. */
  private void awaitNoConnectionInUse() {
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).untilAsserted(() ->
        assertThat(okHttp.connectionPool().connectionCount())
            .isEqualTo(okHttp.connectionPool().idleConnectionCount()));
  }
}

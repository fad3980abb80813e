package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link OperationResult#of(Response)}: a returned response says why it is final, for
 * {@code execute()} and {@code executeAsync()}, against a real server.
 */
@Timeout(30)
class OperationResultOfTest {
  enum Api { EXECUTE, EXECUTE_ASYNC }

  record Row(String name, List<MockResponse> script, int status, OperationResult.Outcome outcome,
      String reason, int attempts, boolean mayHaveExecuted) {
    @Override
    public String toString() {
      return name;
    }
  }

  @RegisterExtension
  final LoopbackServer loopback = new LoopbackServer();
  private MockWebServer server;
  private ResilientHttpClient client;

  static Stream<Arguments> cases() {
    MockResponse ok = new MockResponse.Builder().code(200).body("ok").build();
    MockResponse unavailable = new MockResponse.Builder().code(503).build();
    List<Row> rows = List.of(
        new Row("success after a 503", List.of(unavailable, ok), 200,
            OperationResult.Outcome.SUCCESS, "status-200", 2, true),
        new Row("503 until the attempts ran out", List.of(unavailable, unavailable, unavailable),
            503, OperationResult.Outcome.FAILED_RESPONSE, "attempts-exhausted", 3, false),
        new Row("429 asking for longer than maxRetryAfter (60 s)",
            List.of(new MockResponse.Builder().code(429).setHeader("Retry-After", "120").build()),
            429, OperationResult.Outcome.FAILED_RESPONSE, "retry-after-too-long", 1, false),
        new Row("429 asking for longer than the deadline (2 s)",
            List.of(new MockResponse.Builder().code(429).setHeader("Retry-After", "10").build()),
            429, OperationResult.Outcome.FAILED_RESPONSE, "deadline", 1, false),
        new Row("a permanent 404", List.of(new MockResponse.Builder().code(404).build()), 404,
            OperationResult.Outcome.FAILED_RESPONSE, "status-404", 1, false));
    return rows.stream().flatMap(r -> Stream.of(Api.values()).map(api -> Arguments.of(r, api)));
  }

  @BeforeEach
  void start() {
    server = loopback.server();
    client = ResilientHttpClient.wrap(loopback.okHttp()).noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
            .deadline(Duration.ofSeconds(2)).build())
        .build();
  }

  @ParameterizedTest(name = "{0}, {1}")
  @MethodSource("cases")
  void aReturnedResponseSaysWhyItIsFinal(Row row, Api api) throws Exception {
    row.script().forEach(server::enqueue);
    Operation op = client.operation(new Request.Builder().url(server.url("/r")).build());
    try (Response response = api == Api.EXECUTE ? op.execute()
        : op.executeAsync().get(20, TimeUnit.SECONDS)) {
      assertThat(response.code()).isEqualTo(row.status());
      OperationResult result = OperationResult.of(response).orElseThrow();
      assertThat(result.outcome()).isEqualTo(row.outcome());
      assertThat(result.reason()).isEqualTo(row.reason());
      assertThat(result.statusCode()).isEqualTo(row.status());
      assertThat(result.attempts()).isEqualTo(row.attempts());
      assertThat(result.winningAttempt()).isEqualTo(row.attempts());
      assertThat(result.networkRequests()).isEqualTo(server.getRequestCount());
      assertThat(result.failure()).isEmpty();
      assertThat(result.mayHaveExecuted()).isEqualTo(row.mayHaveExecuted());
      assertThat(result.elapsed()).isLessThan(Duration.ofSeconds(2));
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Api.class)
  void aReturned503AfterALostAnswerSaysTheServerMayHaveActed(Api api) throws Exception {
    // The first attempt's answer is lost after the request was written: it may have charged.
    server.enqueue(new MockResponse.Builder().code(200)
        .onResponseStart(new mockwebserver3.SocketEffect.CloseSocket()).build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    Operation op = client.operation(new Request.Builder().url(server.url("/charge"))
        .post(okhttp3.RequestBody.create("{}", okhttp3.MediaType.get("application/json")))
        .build());
    try (Response response = api == Api.EXECUTE ? op.execute()
        : op.executeAsync().get(20, TimeUnit.SECONDS)) {
      assertThat(response.code()).isEqualTo(503);
      OperationResult result = OperationResult.of(response).orElseThrow();
      assertThat(result.reason()).isEqualTo("attempts-exhausted");
      assertThat(result.mayHaveExecuted()).isTrue();
      assertThat(result.toString()).contains("mayHaveExecuted");
    }
  }

  @Test
  void aPlainCallsResponseSaysItToo() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    try (Response response = client.okHttpClient()
        .newCall(new Request.Builder().url(server.url("/plain")).build()).execute()) {
      OperationResult result = OperationResult.of(response).orElseThrow();
      assertThat(result.reason()).isEqualTo("status-200");
      assertThat(result.attempts()).isEqualTo(2);
    }
  }

  @Test
  void aSuccessAtTheFirstAttemptIsReturnedAsOkHttpMadeIt() throws Exception {
    server.enqueue(new MockResponse.Builder().code(200).build());
    server.enqueue(new MockResponse.Builder().code(200).build());
    try (Response blocking = client.operation(new Request.Builder().url(server.url("/1")).build())
        .execute();
        Response async = client.operation(new Request.Builder().url(server.url("/2")).build())
            .executeAsync().get(20, TimeUnit.SECONDS)) {
      assertThat(OperationResult.of(blocking)).isEmpty();
      assertThat(OperationResult.of(async)).isEmpty();
    }
  }

  @Test
  void aResponseTheSdkDidNotReturnHasNone() {
    Response handMade = new Response.Builder().request(new Request.Builder()
        .url("http://localhost/").build()).protocol(Protocol.HTTP_1_1).code(200).message("OK")
        .build();
    assertThat(OperationResult.of(handMade)).isEmpty();
  }
}

package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.LookupPaymentsServer.Submit;
import io.github.resilienthttp.testkit.LookupPaymentsServer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Outcome queries for a downstream without idempotency keys ({@link LookupPaymentsServer} ignores
 * them): a lost response settled by a lookup that finds the charge (no duplicate), finds nothing (sent
 * again, one charge), or cannot tell; the query's own retry, grace delay and deadline; async.
 */
class OutcomeQueryTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient okHttp = new OkHttpClient.Builder().build();
  private final FakeTimeSource time = new FakeTimeSource();
  private final LookupPaymentsServer server = new LookupPaymentsServer();
  private final List<AttemptKind> kinds = new CopyOnWriteArrayList<>();
  private final List<OutcomeQuery.Answer> answers = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() {
    server.close();
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  private ResilientHttpClient client(TimeSource ts) {
    return ResilientHttpClient.wrap(okHttp).timeSource(ts)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .addListener(new OperationListener() {
          @Override
          public void attemptStarted(OperationInfo operation, int attempt, AttemptKind kind) {
            kinds.add(kind);
          }

          @Override
          public void outcomeQueried(OperationInfo operation, OutcomeQuery.Answer answer) {
            answers.add(answer);
          }
        }).build();
  }

  private Operation charge(ResilientHttpClient c, OutcomeQueryPolicy q) {
    Request post = new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"amount\":100,\"reference\":\"order-42\"}", JSON)).build();
    // The downstream ignores keys: sending one would make retries look safe when they are not.
    return c.operation(post).sendIdempotencyKey(false).outcomeQuery(q);
  }

  private OutcomeQueryPolicy.Builder query() {
    return OutcomeQueryPolicy.builder(
        OutcomeQuery.lookup((request, key) -> server.lookupUrl("order-42")));
  }

  @Test
  void aQueryThatFindsTheChargeEndsWithItNoDuplicate() throws IOException {
    server.script(Submit.CHARGE_THEN_DROP);
    try (Response r = charge(client(time), query().build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(OutcomeQuery.foundByQuery(r)).isTrue();
      assertThat(r.body().string()).contains("\"id\":\"p1\"");
    }
    assertThat(server.charges("order-42")).isEqualTo(1);
    assertThat(server.submits()).isEqualTo(1);
    assertThat(kinds).containsExactly(AttemptKind.FIRST, AttemptKind.QUERY);
    assertThat(answers).containsExactly(OutcomeQuery.Answer.FOUND);
    // The grace delay ran before the query, on the injected clock.
    assertThat(time.sleeps()).containsExactly(Duration.ofSeconds(2));
  }

  @Test
  void metricsCountTheQueryAsAnAttemptOfItsOwnKindAndItsAnswer() throws IOException {
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    ResilientHttpClient client = client(time).newBuilder()
        .addListener(new io.github.resilienthttp.micrometer.MicrometerOperationMetrics(registry))
        .build();
    server.script(Submit.CHARGE_THEN_DROP);
    try (Response r = charge(client, query().build()).execute()) {
      assertThat(OutcomeQuery.foundByQuery(r)).isTrue();
    }
    assertThat(registry.get("resilient.http.outcome_queries").tag("answer", "found").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get("http.client.attempts").tag("attempt.kind", "query").counter().count())
        .isEqualTo(1);
    assertThat(registry.find("http.client.attempts").tag("attempt.kind", "retry").counters())
        .isEmpty();
  }

  @Test
  void aQueryThatFindsNothingSendsItAgainOneCharge() throws IOException {
    server.script(Submit.DROP_WITHOUT_CHARGE);
    try (Response r = charge(client(time), query().build()).execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(OutcomeQuery.foundByQuery(r)).isFalse();
    }
    assertThat(server.charges("order-42")).isEqualTo(1);
    assertThat(server.submits()).isEqualTo(2);
    assertThat(kinds).containsExactly(AttemptKind.FIRST, AttemptKind.QUERY, AttemptKind.RETRY);
    assertThat(answers).containsExactly(OutcomeQuery.Answer.NOT_FOUND);
  }

  @Test
  void aQueryThatCannotTellLeavesTheOutcomeUnknown() {
    server.script(Submit.CHARGE_THEN_DROP).lookupAlways(500);
    assertThatThrownBy(() -> charge(client(time), query().build()).execute())
        .isInstanceOf(OutcomeUnknownException.class);
    assertThat(server.charges("order-42")).isEqualTo(1);
    assertThat(server.submits()).isEqualTo(1);
    assertThat(answers).containsExactly(OutcomeQuery.Answer.CANNOT_TELL);
  }

  @Test
  void theQueryIsRetriedOnTransientFailure() throws IOException {
    server.script(Submit.CHARGE_THEN_DROP).lookupFaults(503);
    try (Response r = charge(client(time), query().build()).execute()) {
      assertThat(OutcomeQuery.foundByQuery(r)).isTrue();
    }
    assertThat(server.lookups()).isEqualTo(2);
    assertThat(kinds).containsExactly(AttemptKind.FIRST, AttemptKind.QUERY, AttemptKind.RETRY);
    assertThat(server.charges("order-42")).isEqualTo(1);
  }

  @Test
  void noTimeLeftForTheGraceDelayMeansNoQuery() {
    server.script(Submit.CHARGE_THEN_DROP);
    Operation op = charge(client(time), query().graceDelay(Duration.ofSeconds(30)).build())
        .deadline(Duration.ofSeconds(10));
    assertThatThrownBy(op::execute).isInstanceOfSatisfying(OutcomeUnknownException.class,
        e -> assertThat(e.getSuppressed()).hasAtLeastOneElementOfType(DeadlineExceededException.class));
    assertThat(server.lookups()).isZero();
  }

  @Test
  void notFoundWithNoReSendLeftIsADefiniteFailure() {
    server.script(Submit.DROP_WITHOUT_CHARGE);
    assertThatThrownBy(() -> charge(client(time), query().maxResends(0).build()).execute())
        .isInstanceOfSatisfying(RetriesExhaustedException.class,
            e -> assertThat(e.reason()).isEqualTo("not-found-by-query"));
    assertThat(server.charges("order-42")).isZero();
  }

  @Test
  void aFoundQueryAsync() throws Exception {
    server.script(Submit.CHARGE_THEN_DROP);
    OutcomeQueryPolicy q = query().graceDelay(Duration.ofMillis(20)).build();
    try (Response r = charge(client(TimeSource.system()), q).executeAsync()
        .get(10, TimeUnit.SECONDS)) {
      assertThat(OutcomeQuery.foundByQuery(r)).isTrue();
    }
    assertThat(server.charges("order-42")).isEqualTo(1);
  }

  @Test
  void aNotFoundQueryAsyncSendsAgainOnce() throws Exception {
    server.script(Submit.DROP_WITHOUT_CHARGE);
    OutcomeQueryPolicy q = query().graceDelay(Duration.ofMillis(20)).build();
    try (Response r = charge(client(TimeSource.system()), q).executeAsync()
        .get(10, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(201);
    }
    assertThat(server.charges("order-42")).isEqualTo(1);
    assertThat(server.submits()).isEqualTo(2);
  }

  @Test
  void aCannotTellAsync() {
    server.script(Submit.CHARGE_THEN_DROP).lookupAlways(400);
    OutcomeQueryPolicy q = query().graceDelay(Duration.ofMillis(20)).build();
    assertThat(charge(client(TimeSource.system()), q).executeAsync())
        .failsWithin(Duration.ofSeconds(10)).withThrowableThat().havingCause()
        .isInstanceOf(OutcomeUnknownException.class);
    assertThat(server.charges("order-42")).isEqualTo(1);
  }

  @Test
  void policyValidates() {
    assertThatThrownBy(() -> query().maxResends(11).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> query().graceDelay(Duration.ofMillis(-1)).build())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void cancellingDuringTheGraceDelayStopsTheQuery() throws Exception {
    server.script(Submit.CHARGE_THEN_DROP);
    Operation op = charge(client(TimeSource.system()),
        query().graceDelay(Duration.ofSeconds(20)).build());
    java.util.concurrent.CompletableFuture<Throwable> thrown =
        java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try {
            op.execute().close();
            return null;
          } catch (IOException e) {
            return e;
          }
        });
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> server.submits() == 1);
    Thread.sleep(100);
    op.cancel();
    assertThat(thrown.get(5, TimeUnit.SECONDS)).isInstanceOf(OutcomeUnknownException.class);
    assertThat(server.lookups()).isZero();
    assertThat(server.charges("order-42")).isEqualTo(1);
  }
}

package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.resilienthttp.micrometer.MicrometerOperationMetrics;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Events, metrics and logs of a scripted faulty run: order, counts, and no secrets. */
class ObservabilityTest {
  private IdempotentTestServer server;
  private OkHttpClient okHttp;
  private final List<String> events = new ArrayList<>();
  private ListAppender<ILoggingEvent> logs;
  private Logger sdkLogger;

  @BeforeEach
  void setUp() throws IOException {
    server = IdempotentTestServer.builder().build().start();
    okHttp = new OkHttpClient();
    sdkLogger = (Logger) LoggerFactory.getLogger("io.github.resilienthttp");
    sdkLogger.setLevel(Level.DEBUG);
    logs = new ListAppender<>();
    logs.start();
    sdkLogger.addAppender(logs);
  }

  @AfterEach
  void tearDown() {
    sdkLogger.detachAppender(logs);
    sdkLogger.setLevel(Level.WARN);
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private final class Recorder implements OperationListener {
    @Override
    public void operationStarted(OperationInfo op) {
      events.add("started " + op.method());
    }

    @Override
    public void attemptStarted(OperationInfo op, int attempt) {
      events.add("attempt " + attempt + (attempt == 1 ? " first" : " retry"));
    }

    @Override
    public void attemptEnded(OperationInfo op, int attempt, int status, IOException failure,
        Decision decision, Duration duration) {
      events.add("ended " + attempt + " " + (status > 0 ? status : "io") + " " + decision.kind());
    }

    @Override
    public void retryScheduled(OperationInfo op, int next, Duration delay, boolean fromRetryAfter) {
      events.add("retry " + next + " in " + delay.toMillis() + "ms" + (fromRetryAfter ? " (Retry-After)" : ""));
    }

    @Override
    public void replayDetected(OperationInfo op, int attempt) {
      events.add("replay " + attempt);
    }

    @Override
    public void inProgress(OperationInfo op, int attempt) {
      events.add("in-progress " + attempt);
    }

    @Override
    public void operationEnded(OperationInfo op, OperationResult result) {
      events.add("done " + result.outcome() + " attempts=" + result.attempts()
          + " network=" + result.networkRequests());
    }
  }

  @Test
  void aScriptedFaultyRunReportsEveryStepInOrderAndCountsThem() throws Exception {
    server.script(Fault.status(503, "2"), Fault.status(409, "0"), Fault.processThenDrop());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MicrometerOperationMetrics metrics = new MicrometerOperationMetrics(registry);
    FakeTimeSource time = new FakeTimeSource();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(time)
        .retryBudget(RetryBudget.tokenBucketBuilder().timeSource(time).build())
        .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .addListener(new Recorder())
        .addListener(new OperationListener() {
          @Override
          public void attemptStarted(OperationInfo op, int attempt) {
            throw new IllegalStateException("a broken listener must not break the operation");
          }
        })
        .addListener(metrics)
        .build();
    metrics.bindTo(client).bindCircuitBreaker(client, server.url("/"));

    Request request = new Request.Builder().url(server.url("/payments"))
        .header("Authorization", "Bearer secret-token-123")
        .header("Cookie", "session=cookie-secret-456")
        .post(RequestBody.create("{\"card\":\"4242-body-secret\"}", MediaType.get("application/json")))
        .build();
    Operation op = client.operation(request);
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
    }

    assertThat(events).containsExactly(
        "started POST",
        "attempt 1 first", "ended 1 503 RETRY", "retry 2 in 2000ms (Retry-After)",
        "attempt 2 retry", "ended 2 409 RETRY", "in-progress 2", "retry 3 in 10ms",
        "attempt 3 retry", "ended 3 io RETRY_IF_IDEMPOTENT", "retry 4 in 10ms",
        "attempt 4 retry", "ended 4 201 SUCCESS", "replay 4",
        "done SUCCESS attempts=4 network=4");
    assertThat(server.stats().requests()).isEqualTo(4);
    assertThat(server.stats().effects()).isEqualTo(1);

    assertThat(registry.get("http.client.attempts").tag("attempt.kind", "first").counter().count()).isEqualTo(1);
    assertThat(registry.get("http.client.attempts").tag("attempt.kind", "retry").counters())
        .extracting(c -> c.count()).containsExactlyInAnyOrder(1.0, 1.0, 1.0);
    assertThat(registry.get("http.client.operations").tag("outcome", "SUCCESS").counter().count()).isEqualTo(1);
    assertThat(registry.get("http.client.operation.resend_count").summary().totalAmount()).isEqualTo(3);
    assertThat(registry.get("resilient.http.replays").counter().count()).isEqualTo(1);
    assertThat(registry.get("resilient.http.in_progress").counter().count()).isEqualTo(1);
    // Full (30) - 1 retry, refilled to 30 by 2 s of floor (3/s), - 1 retry, + 0.03, - 1 retry, + 0.03.
    assertThat(registry.get("resilient.http.retry_budget.tokens").gauge().value())
        .isCloseTo(28.06, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(registry.get("resilient.http.circuit_breaker.state").gauge().value()).isZero();
    assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTags())
        .noneMatch(t -> t.getValue().contains(op.idempotencyKey()) || t.getValue().contains("/payments")));

    List<String> lines = logs.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    assertThat(lines).filteredOn(l -> l.startsWith("POST") && l.contains(" attempt ")).hasSize(4);
    assertThat(lines).anyMatch(l -> l.contains("listener") && l.contains("ignored"));
    String all = String.join("\n", lines) + logs.list.stream()
        .map(e -> String.valueOf(e.getThrowableProxy() == null ? "" : e.getThrowableProxy().getMessage()))
        .reduce("", String::concat);
    assertThat(all).contains(op.idempotencyKey().substring(0, 8))
        .doesNotContain(op.idempotencyKey())
        .doesNotContain("secret-token-123").doesNotContain("cookie-secret-456")
        .doesNotContain("4242-body-secret");
  }

  @Test
  void finalFailuresAreLoggedAtWarnWithAShortKey() throws Exception {
    server.script(Fault.processThenDrop());
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).addListener(new Recorder()).build();
    Request request = new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{}", MediaType.get("application/json"))).build();
    Operation op = client.operation(request).sendIdempotencyKey(false);
    try {
      op.execute().close();
    } catch (OutcomeUnknownException expected) {
      // asserted below
    }
    assertThat(events).last().isEqualTo("done OUTCOME_UNKNOWN attempts=1 network=1");
    assertThat(logs.list).filteredOn(e -> e.getLevel() == Level.WARN)
        .singleElement()
        .satisfies(e -> assertThat(e.getFormattedMessage())
            .contains("gave up").contains(op.idempotencyKey().substring(0, 8))
            .doesNotContain(op.idempotencyKey()));
  }
}

package demo;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OutboxResumer;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.callbacks.CallbackReceiver;
import io.github.resilienthttp.callbacks.CallbackResponse;
import io.github.resilienthttp.callbacks.CallbackVerifier;
import io.github.resilienthttp.callbacks.InMemoryProcessingStore;
import io.github.resilienthttp.callbacks.StandardWebhooksScheme;
import io.github.resilienthttp.callbacks.testkit.CallbackSigner;
import io.github.resilienthttp.callbacks.testkit.ManualClock;
import io.github.resilienthttp.json.JsonCodec;
import io.github.resilienthttp.micrometer.MicrometerOperationMetrics;
import io.github.resilienthttp.opentelemetry.ResilientHttpTracing;
import io.github.resilienthttp.outbox.jdbc.JdbcOutbox;
import io.github.resilienthttp.server.IdempotencyGuard;
import io.github.resilienthttp.server.IdempotentRequest;
import io.github.resilienthttp.server.IdempotentResponse;
import io.github.resilienthttp.server.InMemoryIdempotencyStore;
import io.github.resilienthttp.testkit.FakeTimeSource;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.h2.jdbcx.JdbcDataSource;

/**
 * One use of every artifact the BOM pins, resolved without a version: a lost response parked in a
 * JDBC outbox and resumed with one charge (client, outbox-jdbc, testkit, JSON, Micrometer,
 * OpenTelemetry), a signed webhook received once and then as a duplicate (callbacks and its
 * testkit's signer and clock), and a keyed request handled once by the server's guard and then
 * replayed (server).
 */
public final class BomOnly {
  record CreatePayment(long amount, String currency) {}

  public static void main(String[] args) {
    try {
      run();
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }

  private static void run() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    MicrometerOperationMetrics metrics = new MicrometerOperationMetrics(meters);
    ResilientHttpTracing tracing = ResilientHttpTracing.create(OpenTelemetry.noop());
    OkHttpClient okHttp = new OkHttpClient.Builder().addInterceptor(tracing.interceptor()).build();
    JsonCodec json = JsonCodec.create();

    JdbcDataSource dataSource = new JdbcDataSource();
    dataSource.setURL("jdbc:h2:mem:bomonly;DB_CLOSE_DELAY=-1");
    JdbcOutbox outbox = JdbcOutbox.builder().dataSource(dataSource).build();
    outbox.createSchema();

    try (IdempotentTestServer server = IdempotentTestServer.startDefault()) {
      server.script(Fault.processThenDrop(), Fault.processThenDrop(), Fault.processThenDrop());
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
          .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10))).build())
          .addListener(metrics).addListener(tracing.listener()).build();
      Request charge = new Request.Builder().url(server.url("/payments"))
          .post(json.body(new CreatePayment(100, "EUR"))).build();
      Operation op = client.operation(charge).parkIndefiniteOutcomes(outbox);
      try {
        op.execute().close();
        throw new AssertionError("three lost responses should end in OutcomeUnknownException");
      } catch (OutcomeUnknownException expected) {
        check(outbox.size() == 1, "parked: " + outbox.size());
      }
      OutboxResumer.Report report = OutboxResumer.builder(client, outbox)
          .requestFor(token -> charge).build().drainOnce();
      check(report.resumed() == 1, "resumed: " + report);
      check(server.effectCountForKey(op.idempotencyKey()) == 1, "one charge");
      check(meters.getMeters().size() > 0, "meters recorded");
    } finally {
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }

    ManualClock clock = new ManualClock(Instant.parse("2026-12-01T10:00:00Z"));
    String secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    CallbackSigner signer = StandardWebhooksScheme.of(secret)::sign;
    CallbackReceiver receiver = CallbackReceiver.builder()
        .verifier(CallbackVerifier.builder().scheme(StandardWebhooksScheme.of(secret)).clock(clock).build())
        .store(InMemoryProcessingStore.builder().clock(clock).build())
        .build();
    byte[] body = "{\"type\":\"payment.succeeded\"}".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> headers = new HashMap<>();
    signer.sign("evt_1", clock.instant(), body).forEach((k, v) -> headers.put(k, List.of(v)));
    CallbackResponse first = receiver.receive(headers, body, callback -> "done");
    CallbackResponse again = receiver.receive(headers, body, callback -> "twice?");
    check(first.status() == 200 && first.body().contains("processed"), "first: " + first.body());
    check(again.status() == 200 && again.body().contains("duplicate"), "again: " + again.body());

    IdempotencyGuard guard = IdempotencyGuard.builder().store(new InMemoryIdempotencyStore()).build();
    AtomicInteger charges = new AtomicInteger();
    IdempotentRequest create = new IdempotentRequest("POST", "/payments", null,
        Map.of("Idempotency-Key", List.of("order-1")), body, "alice");
    IdempotentResponse created = guard.handle(create, request -> {
      charges.incrementAndGet();
      return IdempotentResponse.of(201, "application/json", "{\"id\":\"pay_1\"}");
    });
    IdempotentResponse replayed = guard.handle(create, request -> {
      charges.incrementAndGet();
      return IdempotentResponse.of(201, "application/json", "{\"id\":\"pay_2\"}");
    });
    check(created.status() == 201 && charges.get() == 1, "guard: " + created + ", " + charges);
    check(replayed.bodyText().contains("pay_1")
        && "true".equals(replayed.header(IdempotencyGuard.REPLAYED)), "replay: " + replayed);
    System.out.println("BOM ONLY OK");
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }
}

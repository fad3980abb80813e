package io.github.resilienthttp.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.callbacks.TestDatabases;
import io.github.resilienthttp.server.jdk.IdempotentHttpHandler;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The SDK's client against this module on real sockets, through a proxy that resets connections,
 * loses responses after the commit and delays answers past the client's read timeout: every operation
 * ends with exactly one charge row for its key.
 */
class SdkAgainstServerTest {
  private static final MediaType JSON = MediaType.get("application/json");

  /** Real time for the server, but the client's backoff and Retry-After waits shortened 20 times. */
  private static final TimeSource QUICK = new TimeSource() {
    @Override public long nanoTime() { return System.nanoTime(); }
    @Override public Instant now() { return Instant.now(); }
    @Override public void sleep(Duration d) throws InterruptedException {
      Thread.sleep(Math.max(1, d.toMillis() / 20));
    }
  };

  private TestDatabases.PooledDataSource ds;
  private HttpServer server;
  private OkHttpClient okHttp;
  private String charges;
  private IdempotencyGuard guard;
  private final java.util.concurrent.atomic.AtomicInteger inProgressAnswers = new java.util.concurrent.atomic.AtomicInteger();

  @BeforeEach
  void start() throws IOException {
    ds = TestDatabases.h2();
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().dataSource(ds).build();
    store.createSchema();
    charges = TestDatabases.uniqueName("charges");
    TestDatabases.execute(ds, "CREATE TABLE " + charges + " (idem_key VARCHAR(255), body VARCHAR(200))");
    guard = IdempotencyGuard.builder().store(store).lease(Duration.ofSeconds(5))
        .listener(new IdempotencyListener() {
          @Override
          public void inProgress(String key) {
            inProgressAnswers.incrementAndGet();
          }
        }).build();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.createContext("/payments", IdempotentHttpHandler.transactional(guard, (c, r) -> {
      GuardContractTest.sleep(20); // long enough for a retry to meet the key in progress
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + charges + " VALUES (?, ?)")) {
        ps.setString(1, r.header("Idempotency-Key").orElse("none"));
        ps.setString(2, new String(r.body(), java.nio.charset.StandardCharsets.UTF_8));
        ps.executeUpdate();
      }
      return IdempotentResponse.of(201, "application/json", "{\"id\":\"pay_" + r.header("Idempotency-Key").orElse("") + "\"}");
    }));
    server.start();
    // No idle connections: each attempt opens one, so the proxy's per-connection fault hits each attempt.
    okHttp = new OkHttpClient.Builder().readTimeout(Duration.ofMillis(150))
        .connectionPool(new okhttp3.ConnectionPool(0, 1, TimeUnit.SECONDS)).build();
  }

  @AfterEach
  void stop() {
    okHttp.connectionPool().evictAll();
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    ds.close();
  }

  @Test
  void everyOperationChargesExactlyOnceThroughResetsLostResponsesAndDelays() throws Exception {
    SplittableRandom random = new SplittableRandom(25);
    // Three in seven connections pass; each of the four faults takes one in seven.
    FaultProxy.Fault[] mix = {FaultProxy.Fault.PASS, FaultProxy.Fault.PASS, FaultProxy.Fault.PASS,
        FaultProxy.Fault.RESET_BEFORE_SEND, FaultProxy.Fault.RESET_WHILE_PROCESSING,
        FaultProxy.Fault.LOSE_RESPONSE_AFTER_COMMIT, FaultProxy.Fault.DELAY_RESPONSE};
    try (FaultProxy proxy = new FaultProxy(server.getAddress(), () -> mix[random.nextInt(mix.length)], 250)) {
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(QUICK)
          .random(new SplittableRandom(3)).retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
          .retryPolicy(RetryPolicy.builder().maxAttempts(12)
              .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(20), Duration.ofMillis(200)))
              .maxRetryAfter(Duration.ofSeconds(5)).build())
          .build();
      int operations = 25;
      Map<String, Integer> statuses = new java.util.TreeMap<>();
      for (int i = 0; i < operations; i++) {
        Operation op = client.operation(new Request.Builder()
            .url("http://127.0.0.1:" + proxy.port() + "/payments")
            .post(RequestBody.create("{\"order\":" + i + "}", JSON)).build());
        try (Response r = op.execute()) {
          statuses.merge(r.code() + (r.header("Idempotent-Replayed") != null ? " replayed" : ""), 1, Integer::sum);
          assertThat(r.code()).isEqualTo(201);
          assertThat(r.body().string()).isEqualTo("{\"id\":\"pay_" + op.idempotencyKey() + "\"}");
        }
        assertThat(TestDatabases.count(ds, "SELECT COUNT(*) FROM " + charges + " WHERE idem_key = '"
            + op.idempotencyKey() + "'")).as("charges of operation %d", i).isEqualTo(1);
      }
      assertThat(TestDatabases.count(ds, "SELECT COUNT(*) FROM " + charges)).isEqualTo(operations);
      Map<FaultProxy.Fault, Integer> faults = new EnumMap<>(FaultProxy.Fault.class);
      proxy.applied.forEach(f -> faults.merge(f, 1, Integer::sum));
      // Every kind of fault was met, and some retries were answered by the replay.
      assertThat(faults).containsKeys(FaultProxy.Fault.values());
      assertThat(statuses).containsKey("201 replayed");
      assertThat(inProgressAnswers.get()).as("409s met by retries").isPositive();
      System.out.println("SdkAgainstServerTest: " + operations + " operations, faults " + faults + ", answers " + statuses);
    }
  }
  @Test
  void theSdksClassifierReadsThe409AsInProgressAndThe422AsAKeyMismatch() throws Exception {
    java.util.List<String> reasons = new java.util.concurrent.CopyOnWriteArrayList<>();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).timeSource(QUICK)
        .random(new SplittableRandom(3)).retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(5)
            .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(20), Duration.ofMillis(200)))
            .maxRetryAfter(Duration.ofSeconds(5)).build())
        .addListener(new io.github.resilienthttp.OperationListener() {
          @Override
          public void attemptEnded(io.github.resilienthttp.OperationInfo op, int attempt, int status,
              IOException failure, io.github.resilienthttp.Decision decision, Duration duration) {
            reasons.add(status + " " + decision.reason());
          }
        }).build();
    String url = "http://" + server.getAddress().getHostString() + ":" + server.getAddress().getPort() + "/payments";

    // Another request holds the key; it completes once the SDK has met the 409.
    IdempotentRequest holder = new IdempotentRequest("POST", "/payments", null,
        Map.of("Idempotency-Key", java.util.List.of("held-key")),
        "{\"order\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8), null);
    IdempotencyTicket ticket = ((Admission.Proceed) guard.admit(holder)).ticket();
    Thread completer = new Thread(() -> {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (inProgressAnswers.get() == 0 && System.nanoTime() < until) GuardContractTest.sleep(1);
      ticket.complete(IdempotentResponse.of(201, "application/json", "{\"id\":\"pay_held\"}"));
    });
    completer.start();
    Operation held = client.operation(new Request.Builder().url(url)
        .post(RequestBody.create("{\"order\":1}", JSON)).build()).idempotencyKey("held-key");
    try (Response r = held.execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(r.header("Idempotent-Replayed")).isEqualTo("true");
      assertThat(r.body().string()).isEqualTo("{\"id\":\"pay_held\"}");
    }
    completer.join();
    assertThat(reasons.get(0)).isEqualTo("409 idempotency-key-in-progress");

    // The same key with another body: the server's 422 problem is read as a key mismatch, not retried.
    reasons.clear();
    Operation other = client.operation(new Request.Builder().url(url)
        .post(RequestBody.create("{\"order\":2}", JSON)).build()).idempotencyKey("held-key");
    try (Response r = other.execute()) {
      assertThat(r.code()).isEqualTo(422);
    } catch (IOException failed) {
      // a FAIL decision may also surface as an exception; the classification below is what matters
    }
    assertThat(reasons).containsExactly("422 idempotency-key-mismatch");
    assertThat(TestDatabases.count(ds, "SELECT COUNT(*) FROM " + charges)).isZero();
  }
}

package io.github.resilienthttp.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.callbacks.StandardWebhooksScheme;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.github.resilienthttp.testkit.ReceivedRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example end to end on a real embedded Tomcat, with the testkit's idempotent payments server as
 * the acquirer. H2 by default; on PostgreSQL when RESILIENT_HTTP_PG_URL is set (IDs are unique per
 * run, so rows of earlier runs do not matter).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "resilient-http.clients.acquirer.backoff.base=1ms",
    "resilient-http.clients.acquirer.backoff.cap=2ms",
    "resilient-http.clients.acquirer.circuit-breaker.sliding-window-size=4",
    "resilient-http.clients.acquirer.circuit-breaker.failure-rate-threshold=100"})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PaymentsApplicationTest {
  private static final IdempotentTestServer ACQUIRER = start();
  private static final Pattern FIELD = Pattern.compile("\"(id|chargeId)\"\\s*:\\s*\"([^\"]+)\"");
  private final HttpClient http = HttpClient.newHttpClient();

  @LocalServerPort int port;
  @Value("${resilient-http.callbacks.secrets}") String secret;
  @Autowired JdbcTemplate jdbc;
  @Autowired @Qualifier("acquirer") ResilientHttpClient acquirerClient;

  private static IdempotentTestServer start() {
    try {
      return IdempotentTestServer.builder().build().start();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry registry) {
    registry.add("payments.acquirer-url", () -> ACQUIRER.url("/").toString());
    String pg = System.getenv("RESILIENT_HTTP_PG_URL");
    if (pg != null && !pg.isBlank()) registry.add("spring.datasource.url", () -> ownSchema(pg));
  }

  /** A schema of this test's own on the shared database, so other suites' tables cannot collide. */
  private static String ownSchema(String url) {
    String schema = "resilient_http_spring_example";
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(url);
        java.sql.Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("PostgreSQL at RESILIENT_HTTP_PG_URL", e);
    }
    return url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema;
  }

  @AfterAll
  static void stop() {
    ACQUIRER.close();
  }

  private HttpResponse<String> post(String path, String body, Map<String, String> headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static Map<String, String> fields(String json) {
    Map<String, String> out = new java.util.HashMap<>();
    Matcher m = FIELD.matcher(json);
    while (m.find()) out.put(m.group(1), m.group(2));
    return out;
  }

  private String pay() throws Exception {
    HttpResponse<String> r = post("/payments", "{\"amount\":4200,\"currency\":\"EUR\"}", Map.of());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    return r.body();
  }

  @Test
  @Order(1)
  void aChargeWhoseAnswerIsLostIsRetriedWithItsOneKeyAndChargedOnce() throws Exception {
    ACQUIRER.reset();
    ACQUIRER.script(Fault.processThenDrop());
    Map<String, String> payment = fields(pay());

    List<ReceivedRequest> seen = ACQUIRER.requests();
    assertThat(seen).hasSize(2);
    assertThat(seen.get(0).key()).isEqualTo(payment.get("id")).isEqualTo(seen.get(1).key());
    assertThat(ACQUIRER.effects()).hasSize(1);
    assertThat(ACQUIRER.effectCountForKey(payment.get("id"))).isEqualTo(1);
    assertThat(jdbc.queryForObject("SELECT status FROM payments WHERE id = ?", String.class,
        payment.get("id"))).isEqualTo("CHARGED");
  }

  @Test
  @Order(2)
  void aWebhookDeliveredTwiceConcurrentlySettlesOnceWithTheBusinessRowAndAForgeryIs401() throws Exception {
    ACQUIRER.reset();
    Map<String, String> payment = fields(pay());
    String eventId = "evt_" + UUID.randomUUID();
    String event = "{\"type\":\"charge.settled\",\"charge\":\"" + payment.get("chargeId") + "\"}";
    Map<String, String> signed = StandardWebhooksScheme.of(secret)
        .sign(eventId, Instant.now(), event.getBytes(StandardCharsets.UTF_8));

    ExecutorService pool = Executors.newFixedThreadPool(2);
    CountDownLatch go = new CountDownLatch(1);
    List<CompletableFuture<HttpResponse<String>>> deliveries = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      deliveries.add(CompletableFuture.supplyAsync(() -> {
        try {
          go.await();
          return post("/webhooks/acquirer", event, signed);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, pool));
    }
    go.countDown();
    List<HttpResponse<String>> answers = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> d : deliveries) answers.add(d.get(30, TimeUnit.SECONDS));
    pool.shutdown();
    // one processed it; the other saw it done (200 duplicate) or still held (409, retried by a sender)
    assertThat(answers).filteredOn(r -> r.body().contains("\"processed\"")).hasSize(1);
    assertThat(answers).allSatisfy(r -> assertThat(r.statusCode()).isIn(200, 409));
    HttpResponse<String> redelivery = post("/webhooks/acquirer", event, signed);
    assertThat(redelivery.statusCode()).isEqualTo(200);
    assertThat(redelivery.body()).contains("duplicate");

    assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM settlements WHERE event_id = ?", Integer.class,
        eventId)).isEqualTo(1);
    assertThat(jdbc.queryForObject("SELECT status FROM payments WHERE id = ?", String.class,
        payment.get("id"))).isEqualTo("SETTLED");
    assertThat(jdbc.queryForObject("SELECT state FROM callback_processing WHERE scope = 'acquirer'"
        + " AND event_id = ?", String.class, eventId)).isEqualTo("DONE");

    String otherSecret = "whsec_" + Base64.getEncoder().encodeToString(
        "not-the-acquirers-secret-at-all!".getBytes(StandardCharsets.UTF_8));
    String forgedId = "evt_" + UUID.randomUUID();
    HttpResponse<String> forged = post("/webhooks/acquirer", event, StandardWebhooksScheme.of(otherSecret)
        .sign(forgedId, Instant.now(), event.getBytes(StandardCharsets.UTF_8)));
    assertThat(forged.statusCode()).isEqualTo(401);
    assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM callback_processing WHERE event_id = ?",
        Integer.class, forgedId)).isZero();

    String huge = "x".repeat(1024 * 1024 + 1);
    assertThat(post("/webhooks/acquirer", huge, StandardWebhooksScheme.of(secret)
        .sign("evt_" + UUID.randomUUID(), Instant.now(), huge.getBytes(StandardCharsets.UTF_8))).statusCode())
        .isEqualTo(413);
  }

  @Test
  @Order(3)
  void anAcquirerOutageOpensTheBreakerAndHealthShowsItsTarget() throws Exception {
    ACQUIRER.reset();
    ACQUIRER.script(Fault.status(503), Fault.status(503), Fault.status(503), Fault.status(503));
    HttpResponse<String> failed = post("/payments", "{\"amount\":1,\"currency\":\"EUR\"}", Map.of());
    assertThat(failed.statusCode()).isEqualTo(502);
    assertThat(ACQUIRER.requests()).hasSize(4); // max-attempts=4: four failures fill the window of 4

    // open: the next payment is refused before the wire
    assertThat(post("/payments", "{\"amount\":1,\"currency\":\"EUR\"}", Map.of()).statusCode()).isEqualTo(502);
    assertThat(ACQUIRER.requests()).hasSize(4);
    String target = "http://" + ACQUIRER.url("/").host() + ":" + ACQUIRER.port();
    assertThat(acquirerClient.circuitBreakerFor(ACQUIRER.url("/")).orElseThrow().getState().name())
        .isEqualTo("OPEN");

    HttpResponse<String> health = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/actuator/health")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(503);
    assertThat(health.body()).contains("\"resilientHttp\"").contains("\"openTargets\":[\"" + target + "\"]");
  }
}

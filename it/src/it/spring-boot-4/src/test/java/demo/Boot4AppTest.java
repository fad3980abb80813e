package demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.callbacks.StandardWebhooksScheme;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "resilient-http.clients.payments.max-attempts=2")
class Boot4AppTest {
  static final String SECRET = "whsec_YS0zMi1ieXRlLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=";
  private final HttpClient http = HttpClient.newHttpClient();

  @LocalServerPort int port;
  @Autowired @Qualifier("payments") ResilientHttpClient payments;
  @Autowired MeterRegistry meters;
  @Autowired JdbcTemplate jdbc;

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> webhook(String secret, String eventId, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/webhooks/payments"))
        .POST(HttpRequest.BodyPublishers.ofString(body));
    Map<String, String> headers = StandardWebhooksScheme.of(secret)
        .sign(eventId, Instant.now(), body.getBytes(StandardCharsets.UTF_8));
    headers.forEach(b::header);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theStarterWorksOnBoot4() throws Exception {
    System.out.println("BOOT VERSION " + org.springframework.boot.SpringBootVersion.getVersion());
    assertThat(org.springframework.boot.SpringBootVersion.getVersion()).startsWith("4.");
    assertThat(payments.retryPolicy().maxAttempts()).isEqualTo(2);

    // a call through the client: the Micrometer binding counts it
    try (Response r = payments.operation(new Request.Builder()
        .url("http://127.0.0.1:" + port + "/actuator/health").build()).execute()) {
      assertThat(r.isSuccessful()).isTrue();
    }
    assertThat(meters.get("http.client.operations").counter().count()).isEqualTo(1.0);

    // the health contributor on Boot 4's health API; an open breaker takes it down
    assertThat(get("/actuator/health").body()).contains("\"resilientHttp\"");
    payments.circuitBreakerFor(HttpUrl.get("http://127.0.0.1:" + port + "/")).orElseThrow()
        .transitionToOpenState();
    HttpResponse<String> health = get("/actuator/health");
    assertThat(health.statusCode()).isEqualTo(503);
    assertThat(health.body()).contains("openTargets").contains("http://127.0.0.1:" + port);

    // a signed webhook twice: processed once, committed with the business row; a forged one: 401
    String body = "{\"type\":\"payment.succeeded\"}";
    assertThat(webhook(SECRET, "evt_boot4", body).body()).contains("processed");
    assertThat(webhook(SECRET, "evt_boot4", body).body()).contains("duplicate");
    assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM payment_events", Integer.class)).isEqualTo(1);
    String forged = "whsec_" + java.util.Base64.getEncoder().encodeToString(
        "another-secret-of-32-bytes-long!".getBytes(StandardCharsets.UTF_8));
    assertThat(webhook(forged, "evt_forged", body).statusCode()).isEqualTo(401);
    System.out.println("SPRING BOOT 4 OK");
  }
}

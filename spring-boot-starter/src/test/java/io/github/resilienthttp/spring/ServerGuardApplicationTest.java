package io.github.resilienthttp.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The starter's filter in a real Boot servlet application (Tomcat, random port, H2): the handler's
 * row and the record commit together; the retry gets the replay; another body gets 422; a duplicate
 * while the first runs gets 409; a 5xx rolls the handler's row back and releases the key.
 */
@SpringBootTest(classes = ServerGuardApplicationTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"spring.datasource.url=jdbc:h2:mem:serverapp;DB_CLOSE_DELAY=-1",
        "resilient-http.server.enabled=true", "resilient-http.server.create-schema=true",
        "resilient-http.server.url-patterns=/charges"})
class ServerGuardApplicationTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  @LocalServerPort int port;
  @Autowired JdbcTemplate jdbc;

  @BeforeEach
  void table() {
    jdbc.execute("CREATE TABLE IF NOT EXISTS charges (id BIGINT PRIMARY KEY, body VARCHAR(200))");
    jdbc.execute("CREATE SEQUENCE IF NOT EXISTS charges_seq");
    jdbc.update("DELETE FROM charges");
    Charges.reset();
  }

  private HttpResponse<String> post(String key, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/charges"))
        .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) b.header("Idempotency-Key", key);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private int rows() {
    return jdbc.queryForObject("SELECT COUNT(*) FROM charges", Integer.class);
  }

  @Test
  void onceThenTheReplayThen422ForAnotherBody() throws Exception {
    HttpResponse<String> first = post("k-1", "{\"amount\":42}");
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();

    HttpResponse<String> retry = post("k-1", "{\"amount\":42}");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");

    HttpResponse<String> other = post("k-1", "{\"amount\":43}");
    assertThat(other.statusCode()).isEqualTo(422);
    assertThat(other.headers().firstValue("Content-Type")).hasValueSatisfying(
        t -> assertThat(t).startsWith("application/problem+json"));
    assertThat(rows()).isEqualTo(1);
    assertThat(Charges.runs).isEqualTo(1);
  }

  @Test
  void aDuplicateWhileTheFirstRunsGets409() throws Exception {
    Charges.gate = new CountDownLatch(1);
    CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> {
      try {
        return post("k-2", "{\"amount\":7}");
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(Charges.entered.await(10, TimeUnit.SECONDS)).isTrue();
    HttpResponse<String> duplicate = post("k-2", "{\"amount\":7}");
    Charges.gate.countDown();
    assertThat(duplicate.statusCode()).isEqualTo(409);
    assertThat(duplicate.headers().firstValue("Retry-After")).isPresent();
    assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    assertThat(post("k-2", "{\"amount\":7}").headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(rows()).isEqualTo(1);
    assertThat(Charges.runs).isEqualTo(1);
  }

  @Test
  void a5xxRollsTheHandlersRowBackAndTheRetryRunsAgain() throws Exception {
    Charges.failNext = true;
    assertThat(post("k-3", "{\"amount\":9}").statusCode()).isEqualTo(503);
    assertThat(rows()).isZero(); // written inside the transaction, rolled back with the 5xx

    HttpResponse<String> retry = post("k-3", "{\"amount\":9}");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(rows()).isEqualTo(1);
    assertThat(Charges.runs).isEqualTo(2);
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Charges.class)
  static class App {}

  @RestController
  static class Charges {
    static volatile int runs;
    static volatile boolean failNext;
    static volatile CountDownLatch gate;
    static volatile CountDownLatch entered;
    private final JdbcTemplate jdbc;

    Charges(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    static void reset() {
      runs = 0;
      failNext = false;
      gate = null;
      entered = new CountDownLatch(1);
    }

    @PostMapping("/charges")
    ResponseEntity<String> charge(@RequestBody String body) throws InterruptedException {
      runs++;
      Long id = jdbc.queryForObject("SELECT NEXT VALUE FOR charges_seq", Long.class);
      jdbc.update("INSERT INTO charges (id, body) VALUES (?, ?)", id, body);
      entered.countDown();
      CountDownLatch g = gate;
      if (g != null && !g.await(10, TimeUnit.SECONDS)) throw new IllegalStateException("gate not opened");
      if (failNext) {
        failNext = false;
        return ResponseEntity.status(503).body("{\"error\":\"try later\"}");
      }
      return ResponseEntity.status(201).header("Content-Type", "application/json")
          .body("{\"id\":" + id + "}");
    }
  }
}

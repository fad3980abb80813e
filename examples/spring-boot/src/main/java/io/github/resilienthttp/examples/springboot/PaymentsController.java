package io.github.resilienthttp.examples.springboot;

import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResilientHttpException;
import java.io.IOException;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** Creates payments by charging the acquirer, and shows them. */
@RestController
class PaymentsController {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final Pattern CHARGE_ID = Pattern.compile("\"id\"\\s*:\\s*\"([^\"]+)\"");
  private final ResilientHttpClient acquirer;
  private final AcquirerEndpoint endpoint;
  private final JdbcTemplate jdbc;

  PaymentsController(@Qualifier("acquirer") ResilientHttpClient acquirer, AcquirerEndpoint endpoint,
      JdbcTemplate jdbc) {
    this.acquirer = acquirer;
    this.endpoint = endpoint;
    this.jdbc = jdbc;
  }

  record NewPayment(long amount, String currency) {}

  @PostMapping("/payments")
  ResponseEntity<Map<String, Object>> create(@org.springframework.web.bind.annotation.RequestBody NewPayment payment) throws IOException {
    // The payment's ID is the charge's idempotency key: every retry of this charge carries it, and
    // the acquirer replays its first answer instead of charging again.
    String paymentId = IdempotencyKeyPolicy.newKey();
    Request charge = new Request.Builder().url(endpoint.url().resolve("/charges"))
        .post(RequestBody.create("{\"amount\":" + payment.amount() + ",\"currency\":\""
            + payment.currency() + "\"}", JSON))
        .build();
    var operation = acquirer.operation(charge).idempotencyKey(paymentId);
    try (Response r = executeOrNull(operation)) {
      if (r == null) {
        return ResponseEntity.status(HttpStatus.BAD_GATEWAY).body(Map.of("id", paymentId, "error",
            "acquirer unavailable", "attempts", operation.attempts()));
      }
      String body = r.body().string();
      if (!r.isSuccessful()) {
        return ResponseEntity.status(HttpStatus.BAD_GATEWAY).body(Map.of("acquirerStatus", r.code()));
      }
      Matcher m = CHARGE_ID.matcher(body);
      String chargeId = m.find() ? m.group(1) : null;
      jdbc.update("INSERT INTO payments (id, amount, currency, charge_id, status) VALUES (?, ?, ?, ?, 'CHARGED')",
          paymentId, payment.amount(), payment.currency(), chargeId);
      return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("id", paymentId, "chargeId",
          String.valueOf(chargeId), "status", "CHARGED", "attempts", operation.attempts()));
    }
  }

  /** The acquirer's answer, or null when the SDK gave up (retries exhausted, breaker open, deadline). */
  private static Response executeOrNull(io.github.resilienthttp.Operation operation) throws IOException {
    try {
      return operation.execute();
    } catch (ResilientHttpException e) {
      return null; // a failure that says whether the charge may have happened: retry with the same key
    }
  }

  @GetMapping("/payments/{id}")
  ResponseEntity<Map<String, Object>> show(@PathVariable("id") String id) {
    return jdbc.queryForList("SELECT id, amount, currency, charge_id, status FROM payments WHERE id = ?", id)
        .stream().findFirst().map(ResponseEntity::ok).orElse(ResponseEntity.notFound().build());
  }
}

package io.github.resilienthttp.examples.springboot;

import io.github.resilienthttp.callbacks.CallbackHandler;
import io.github.resilienthttp.callbacks.VerifiedCallback;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The acquirer's {@code charge.settled} events. The starter maps {@code POST /webhooks/acquirer}
 * ({@code resilient-http.callbacks.path}) to this handler and runs it in a transaction of the
 * application's transaction manager: the settlement row, the payment's new status and the record
 * that the event was processed commit together, so a redelivered event settles nothing twice.
 */
@Component
class AcquirerWebhooks implements CallbackHandler {
  private static final Pattern CHARGE_ID = Pattern.compile("\"charge\"\\s*:\\s*\"([^\"]+)\"");
  private final JdbcTemplate jdbc;

  AcquirerWebhooks(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  @Override
  public String handle(VerifiedCallback callback) {
    Matcher m = CHARGE_ID.matcher(callback.bodyUtf8());
    if (!m.find()) throw new IllegalArgumentException("no charge in the event");
    String chargeId = m.group(1);
    jdbc.update("INSERT INTO settlements (event_id, charge_id) VALUES (?, ?)",
        callback.eventId().orElseThrow(), chargeId);
    int updated = jdbc.update("UPDATE payments SET status = 'SETTLED' WHERE charge_id = ?", chargeId);
    return updated == 1 ? "settled" : "unknown charge";
  }
}

package io.github.resilienthttp.callbacks.testkit;

import java.time.Instant;
import java.util.Map;

/**
 * Signs one delivery the way a sender does: {@code StandardWebhooksScheme::sign} and
 * {@code StripeScheme::sign} fit.
 */
@FunctionalInterface
public interface CallbackSigner {
  /**
   * The signature headers for one delivery.
   *
   * @param eventId the event ID
   * @param timestamp the time to sign
   * @param body the raw body bytes
   * @return header names to values
   */
  Map<String, String> sign(String eventId, Instant timestamp, byte[] body);
}

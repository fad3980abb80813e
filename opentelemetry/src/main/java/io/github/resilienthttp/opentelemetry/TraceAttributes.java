package io.github.resilienthttp.opentelemetry;

import io.opentelemetry.api.common.AttributeKey;

/**
 * The attribute keys recorded. The HTTP ones are OpenTelemetry's stable semantic conventions, written
 * out here rather than taken from the incubating semconv artifact, so the only runtime dependency is
 * {@code opentelemetry-api}.
 */
final class TraceAttributes {
  static final AttributeKey<String> HTTP_REQUEST_METHOD = AttributeKey.stringKey("http.request.method");
  static final AttributeKey<Long> HTTP_REQUEST_RESEND_COUNT =
      AttributeKey.longKey("http.request.resend_count");
  static final AttributeKey<Long> HTTP_RESPONSE_STATUS_CODE =
      AttributeKey.longKey("http.response.status_code");
  static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
  static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
  static final AttributeKey<String> URL_FULL = AttributeKey.stringKey("url.full");
  static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("resilient_http.attempt");
  static final AttributeKey<String> ATTEMPT_KIND =
      AttributeKey.stringKey("resilient_http.attempt.kind");
  static final AttributeKey<Long> WINNING_ATTEMPT =
      AttributeKey.longKey("resilient_http.winning_attempt");
  static final AttributeKey<Long> ATTEMPTS = AttributeKey.longKey("resilient_http.attempts");
  static final AttributeKey<String> DECISION = AttributeKey.stringKey("resilient_http.decision");
  static final AttributeKey<String> REASON = AttributeKey.stringKey("resilient_http.reason");
  static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("resilient_http.outcome");
  static final AttributeKey<Boolean> IDEMPOTENT = AttributeKey.booleanKey("resilient_http.idempotent");
  static final AttributeKey<Boolean> KEY_SENT =
      AttributeKey.booleanKey("resilient_http.idempotency_key.sent");
  static final AttributeKey<String> KEY_PREFIX =
      AttributeKey.stringKey("resilient_http.idempotency_key.prefix");
  static final AttributeKey<Long> NEXT_ATTEMPT = AttributeKey.longKey("resilient_http.next_attempt");
  static final AttributeKey<Long> RETRY_DELAY_MS = AttributeKey.longKey("resilient_http.retry.delay_ms");
  static final AttributeKey<Boolean> FROM_RETRY_AFTER =
      AttributeKey.booleanKey("resilient_http.retry.from_retry_after");
  static final AttributeKey<Long> PACED_WAIT_MS = AttributeKey.longKey("resilient_http.paced.wait_ms");
  static final AttributeKey<String> BREAKER = AttributeKey.stringKey("resilient_http.circuit_breaker");

  private TraceAttributes() {}
}

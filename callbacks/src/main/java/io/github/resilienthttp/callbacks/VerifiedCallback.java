package io.github.resilienthttp.callbacks;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A delivery whose signature and timestamp were checked: what a handler may trust.
 *
 * <p>Immutable and thread-safe; {@link #body()} returns a copy.
 */
public final class VerifiedCallback {
  private final String scheme;
  private final String eventId;
  private final Instant timestamp;
  private final byte[] body;
  private final CallbackHeaders headers;

  /**
   * Used by {@link SignatureScheme} implementations once the signature matched.
   *
   * @param scheme the scheme's name, for messages
   * @param eventId the event ID the sender signed, or {@code null} when the scheme signs none (Stripe:
   *     the ID is in the JSON body)
   * @param timestamp the signed timestamp
   * @param body the raw body bytes (copied)
   * @param headers the delivery's headers
   */
  public VerifiedCallback(
      String scheme, String eventId, Instant timestamp, byte[] body, CallbackHeaders headers) {
    this.scheme = Objects.requireNonNull(scheme, "scheme");
    this.eventId = eventId;
    this.timestamp = Objects.requireNonNull(timestamp, "timestamp");
    this.body = Objects.requireNonNull(body, "body").clone();
    this.headers = Objects.requireNonNull(headers, "headers");
  }

  /** {@return the name of the scheme that verified it, e.g. {@code standard-webhooks}} */
  public String scheme() {
    return scheme;
  }

  /** {@return the signed event ID ({@code webhook-id}), empty when the scheme signs none} */
  public Optional<String> eventId() {
    return Optional.ofNullable(eventId);
  }

  /** {@return the signed timestamp (second precision)} */
  public Instant timestamp() {
    return timestamp;
  }

  /** {@return a copy of the raw body bytes, exactly as signed} */
  public byte[] body() {
    return body.clone();
  }

  /** {@return the body decoded as UTF-8} */
  public String bodyUtf8() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** {@return the delivery's headers} */
  public CallbackHeaders headers() {
    return headers;
  }

  @Override
  public String toString() {
    return "VerifiedCallback{scheme=" + scheme + ", eventId=" + eventId + ", timestamp=" + timestamp
        + ", bodyBytes=" + body.length + "}";
  }
}

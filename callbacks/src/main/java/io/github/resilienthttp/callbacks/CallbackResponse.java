package io.github.resilienthttp.callbacks;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a receiver answers a sender, independent of any web framework: copy {@link #status()},
 * {@link #headers()} and {@link #body()} into the framework's response. {@link #outcome()} and
 * {@link #failure()} are for the receiver's own logs and metrics, not for the sender.
 *
 * <p>Immutable and thread-safe.
 */
public final class CallbackResponse {

  /** What happened to the delivery, with the HTTP status it is answered with. */
  public enum Outcome {
    /** 200: verified, processed now. */
    PROCESSED(200),
    /** 200: verified, processed before (a duplicate); nothing ran. */
    DUPLICATE(200),
    /** 409 with {@code Retry-After}: another consumer holds the lease, or took it over. */
    IN_PROGRESS(409),
    /** 400: a signature header is missing or malformed, or there is no usable event ID. */
    MALFORMED(400),
    /**
     * 413: the body is longer than {@link CallbackReceiver.Builder#maxBodyBytes(int)}; refused before
     * verification, nothing recorded.
     */
    BODY_TOO_LARGE(413),
    /** 401: no signature matches; forged, altered or signed with an unknown secret. Nothing recorded. */
    SIGNATURE_MISMATCH(401),
    /** 400: authentic but outside the timestamp tolerance (a replay, or a skewed clock). */
    TIMESTAMP_OUT_OF_TOLERANCE(400),
    /** 500: the handler threw; the record was released, so a redelivery processes it. */
    HANDLER_FAILED(500),
    /** 503 with {@code Retry-After}: the processing store failed; nothing ran. */
    STORE_UNAVAILABLE(503);

    private final int status;

    Outcome(int status) {
      this.status = status;
    }

    /** {@return the HTTP status for this outcome} */
    public int status() {
      return status;
    }

    /** {@return true for 2xx outcomes, after which a sender stops redelivering} */
    public boolean acknowledged() {
      return status / 100 == 2;
    }
  }

  private final Outcome outcome;
  private final String eventId;
  private final Map<String, String> headers;
  private final String body;
  private final Throwable failure;

  CallbackResponse(Outcome outcome, String eventId, Map<String, String> headers, String body,
      Throwable failure) {
    this.outcome = Objects.requireNonNull(outcome, "outcome");
    this.eventId = eventId;
    this.headers = Map.copyOf(headers);
    this.body = Objects.requireNonNull(body, "body");
    this.failure = failure;
  }

  /** {@return what happened} */
  public Outcome outcome() {
    return outcome;
  }

  /** {@return the HTTP status to answer with} */
  public int status() {
    return outcome.status();
  }

  /** {@return response headers: {@code Content-Type}, and {@code Retry-After} for 409 and 503} */
  public Map<String, String> headers() {
    return headers;
  }

  /** {@return a small JSON body; it never contains a secret, a signature or handler details} */
  public String body() {
    return body;
  }

  /** {@return the event ID, when the delivery got that far} */
  public Optional<String> eventId() {
    return Optional.ofNullable(eventId);
  }

  /** {@return the exception behind a 4xx or 5xx, for the receiver's logs} */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure);
  }

  @Override
  public String toString() {
    return "CallbackResponse{" + status() + " " + outcome + ", eventId=" + eventId + "}";
  }
}

package io.github.resilienthttp.testkit;

import java.time.Duration;
import java.util.Objects;

/**
 * One scripted fault that {@link IdempotentTestServer} applies to exactly one arriving request.
 *
 * <p>Faults are queued with {@link IdempotentTestServer#script(Fault...)} and consumed in FIFO
 * order, one per request that reaches the server's dispatcher (in arrival order). Some faults
 * answer <em>without</em> processing the request (no business effect, nothing recorded for the
 * idempotency key): {@link #status(int)}, {@link #dropBeforeProcessing()} and {@link #noResponse()}.
 * The others process the request normally (effect, idempotency bookkeeping) and only alter how the
 * response is delivered: {@link #processThenDrop()}, {@link #delayHeaders(Duration)},
 * {@link #throttleBody(long, Duration)}. {@link #ok()} is an explicit "no fault" placeholder that
 * still consumes one script slot.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class Fault {

  /** The kind of a {@link Fault}. */
  public enum Kind {
    /** No fault: the request is served normally. */
    NONE,
    /** Answer an injected status code without processing the request. */
    STATUS,
    /** Process the request, record the response for its key, then close the socket unanswered. */
    PROCESS_THEN_DROP,
    /** Read the request, do not process it, close the socket unanswered. */
    DROP_BEFORE_PROCESSING,
    /** Process the request normally but delay the response headers. */
    DELAY_HEADERS,
    /** Process the request normally but throttle the response body. */
    THROTTLE_BODY,
    /** Read the request, do not process it, never answer (the socket stalls until closed). */
    NO_RESPONSE
  }

  private static final Fault OK = new Fault(Kind.NONE, 0, null, Duration.ZERO, 0, Duration.ZERO);
  private static final Fault PROCESS_THEN_DROP =
      new Fault(Kind.PROCESS_THEN_DROP, 0, null, Duration.ZERO, 0, Duration.ZERO);
  private static final Fault DROP_BEFORE_PROCESSING =
      new Fault(Kind.DROP_BEFORE_PROCESSING, 0, null, Duration.ZERO, 0, Duration.ZERO);
  private static final Fault NO_RESPONSE =
      new Fault(Kind.NO_RESPONSE, 0, null, Duration.ZERO, 0, Duration.ZERO);

  private final Kind kind;
  private final int statusCode;
  private final String retryAfter;
  private final Duration delay;
  private final long bytesPerPeriod;
  private final Duration period;

  private Fault(
      Kind kind,
      int statusCode,
      String retryAfter,
      Duration delay,
      long bytesPerPeriod,
      Duration period) {
    this.kind = kind;
    this.statusCode = statusCode;
    this.retryAfter = retryAfter;
    this.delay = delay;
    this.bytesPerPeriod = bytesPerPeriod;
    this.period = period;
  }

  /**
   * Explicitly no fault; the request is served normally but still consumes one script slot.
   *
   * @return the shared "no fault" instance
   */
  public static Fault ok() {
    return OK;
  }

  /**
   * Answers {@code code} immediately, without processing the request (no effect, nothing recorded
   * for the idempotency key), with a small {@code text/plain} body and no {@code Retry-After}.
   *
   * @param code the HTTP status code, 200..599
   * @return the fault
   * @throws IllegalArgumentException if {@code code} is outside 200..599
   */
  public static Fault status(int code) {
    return status(code, null);
  }

  /**
   * Answers {@code code} immediately, without processing the request (no effect, nothing recorded
   * for the idempotency key), with a small {@code text/plain} body and the given {@code
   * Retry-After} header value sent verbatim (it is not validated, so malformed values such as
   * {@code "garbage"} or huge values such as {@code "99999999999"} can be injected).
   *
   * @param code the HTTP status code, 200..599
   * @param retryAfterHeaderValue the raw {@code Retry-After} value, or {@code null} for none
   * @return the fault
   * @throws IllegalArgumentException if {@code code} is outside 200..599
   */
  public static Fault status(int code, String retryAfterHeaderValue) {
    if (code < 200 || code > 599) {
      throw new IllegalArgumentException("status code must be 200..599: " + code);
    }
    return new Fault(Kind.STATUS, code, retryAfterHeaderValue, Duration.ZERO, 0, Duration.ZERO);
  }

  /**
   * Processes the request normally (the business effect happens and the response is recorded for
   * its idempotency key), then closes the connection instead of sending the response: the
   * "response lost" case. The client sees an {@link java.io.IOException} after it has written the
   * whole request.
   *
   * @return the fault
   */
  public static Fault processThenDrop() {
    return PROCESS_THEN_DROP;
  }

  /**
   * Reads the request but does not process it (no effect), then closes the connection without
   * answering. On the wire this is indistinguishable from {@link #processThenDrop()}.
   *
   * @return the fault
   */
  public static Fault dropBeforeProcessing() {
    return DROP_BEFORE_PROCESSING;
  }

  /**
   * Processes the request normally, then waits {@code delay} before sending the response headers.
   *
   * @param delay the delay before the status line is written; zero or positive
   * @return the fault
   * @throws IllegalArgumentException if {@code delay} is negative
   */
  public static Fault delayHeaders(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay must not be negative: " + delay);
    }
    return new Fault(Kind.DELAY_HEADERS, 0, null, delay, 0, Duration.ZERO);
  }

  /**
   * Processes the request normally, then sends the response body at most {@code bytesPerPeriod}
   * bytes per {@code period} (headers are not throttled). Use a padded handler such as {@link
   * BusinessHandler#defaultHandler(int)} to make bodies long enough for this to matter.
   *
   * @param bytesPerPeriod bytes written per period, at least 1
   * @param period the pause after each chunk, positive
   * @return the fault
   * @throws IllegalArgumentException if an argument is out of range
   */
  public static Fault throttleBody(long bytesPerPeriod, Duration period) {
    Objects.requireNonNull(period, "period");
    if (bytesPerPeriod < 1) {
      throw new IllegalArgumentException("bytesPerPeriod must be >= 1: " + bytesPerPeriod);
    }
    if (period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("period must be positive: " + period);
    }
    return new Fault(Kind.THROTTLE_BODY, 0, null, Duration.ZERO, bytesPerPeriod, period);
  }

  /**
   * Reads the request, does not process it (no effect) and never answers; the server-side
   * connection stalls until the server is closed. The client only finishes by timing out (e.g. its
   * read or call timeout).
   *
   * @return the fault
   */
  public static Fault noResponse() {
    return NO_RESPONSE;
  }

  /**
   * Returns the kind of this fault.
   *
   * @return the kind, never null
   */
  public Kind kind() {
    return kind;
  }

  /**
   * Returns the injected status code.
   *
   * @return the status for {@link Kind#STATUS}, otherwise 0
   */
  public int statusCode() {
    return statusCode;
  }

  /**
   * Returns the raw {@code Retry-After} header value sent with an injected status.
   *
   * @return the value, or {@code null} if none is sent
   */
  public String retryAfter() {
    return retryAfter;
  }

  /**
   * Returns the header delay.
   *
   * @return the delay for {@link Kind#DELAY_HEADERS}, otherwise {@link Duration#ZERO}
   */
  public Duration delay() {
    return delay;
  }

  /**
   * Returns the body throttle rate numerator.
   *
   * @return bytes per period for {@link Kind#THROTTLE_BODY}, otherwise 0
   */
  public long bytesPerPeriod() {
    return bytesPerPeriod;
  }

  /**
   * Returns the body throttle period.
   *
   * @return the period for {@link Kind#THROTTLE_BODY}, otherwise {@link Duration#ZERO}
   */
  public Duration period() {
    return period;
  }

  /**
   * Tells whether a request hit by this fault is processed by the business logic (and can
   * therefore produce an effect and be recorded for its idempotency key).
   *
   * @return true for {@link Kind#NONE}, {@link Kind#PROCESS_THEN_DROP}, {@link Kind#DELAY_HEADERS}
   *     and {@link Kind#THROTTLE_BODY}
   */
  public boolean processesRequest() {
    switch (kind) {
      case NONE:
      case PROCESS_THEN_DROP:
      case DELAY_HEADERS:
      case THROTTLE_BODY:
        return true;
      default:
        return false;
    }
  }

  /**
   * Tells whether this is an actual fault (anything but {@link Kind#NONE}).
   *
   * @return true unless this is {@link #ok()}
   */
  public boolean isFault() {
    return kind != Kind.NONE;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Fault)) {
      return false;
    }
    Fault f = (Fault) o;
    return kind == f.kind
        && statusCode == f.statusCode
        && Objects.equals(retryAfter, f.retryAfter)
        && delay.equals(f.delay)
        && bytesPerPeriod == f.bytesPerPeriod
        && period.equals(f.period);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, statusCode, retryAfter, delay, bytesPerPeriod, period);
  }

  @Override
  public String toString() {
    switch (kind) {
      case STATUS:
        return retryAfter == null
            ? "Fault.status(" + statusCode + ")"
            : "Fault.status(" + statusCode + ", \"" + retryAfter + "\")";
      case DELAY_HEADERS:
        return "Fault.delayHeaders(" + delay + ")";
      case THROTTLE_BODY:
        return "Fault.throttleBody(" + bytesPerPeriod + ", " + period + ")";
      case PROCESS_THEN_DROP:
        return "Fault.processThenDrop()";
      case DROP_BEFORE_PROCESSING:
        return "Fault.dropBeforeProcessing()";
      case NO_RESPONSE:
        return "Fault.noResponse()";
      default:
        return "Fault.ok()";
    }
  }
}

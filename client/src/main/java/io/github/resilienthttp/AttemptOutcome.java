package io.github.resilienthttp;

import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import okhttp3.Request;
import okhttp3.Response;

/**
 * What happened in one attempt of an operation: the input of a {@link ResponseClassifier}.
 *
 * <p>Exactly one of {@link #response()} and {@link #exception()} is present. The response's body
 * has not been read; a classifier may {@link Response#peekBody(long) peek} at it but must not
 * consume or close it (the SDK closes every response it does not return).
 *
 * <p>Immutable; valid only during the classifier call.
 */
public final class AttemptOutcome {
  private final Request request;
  private final Response response;
  private final IOException exception;
  private final int attempt;
  private final boolean requestMayHaveReachedServer;
  private final boolean idempotent;
  /** The running operation's key, made on first use; null for outcomes built by tests. */
  private final Supplier<String> operationKey;
  private final String idempotencyKey;
  private final boolean idempotencyKeySent;
  private final TimeSource clock;

  /**
   * The outcome of an attempt of a running operation: what the SDK's engine passes to the
   * classifier. Also usable to test a classifier with every field chosen.
   *
   * @param request the request as sent (with the key header when one was sent)
   * @param response the attempt's response, or {@code null} when it failed with {@code exception}
   * @param exception the attempt's failure, or {@code null} when it got {@code response}
   * @param attempt the attempt's number, from 1
   * @param requestMayHaveReachedServer whether request bytes were written before a failure
   * @param idempotent whether the operation may be repeated safely
   * @param idempotencyKeySent whether the key was sent
   * @param idempotencyKey supplies the operation's key (asked for only when read)
   * @param clock the client's time source, to resolve an HTTP-date {@code Retry-After}
   * @return the outcome
   * @throws IllegalArgumentException unless exactly one of {@code response} and {@code exception}
   *     is given
   */
  public static AttemptOutcome of(Request request, Response response, IOException exception,
      int attempt, boolean requestMayHaveReachedServer, boolean idempotent,
      boolean idempotencyKeySent, Supplier<String> idempotencyKey, TimeSource clock) {
    return new AttemptOutcome(request, response, exception, attempt, requestMayHaveReachedServer,
        idempotent, Objects.requireNonNull(idempotencyKey, "idempotencyKey"), null,
        idempotencyKeySent, clock);
  }

  private AttemptOutcome(
      Request request,
      Response response,
      IOException exception,
      int attempt,
      boolean requestMayHaveReachedServer,
      boolean idempotent,
      Supplier<String> operationKey,
      String idempotencyKey,
      boolean idempotencyKeySent,
      TimeSource clock) {
    if ((response == null) == (exception == null)) {
      throw new IllegalArgumentException("exactly one of response and exception");
    }
    this.request = Objects.requireNonNull(request, "request");
    this.response = response;
    this.exception = exception;
    this.attempt = attempt;
    this.requestMayHaveReachedServer = requestMayHaveReachedServer;
    this.idempotent = idempotent;
    this.operationKey = operationKey;
    this.idempotencyKey = idempotencyKey;
    this.idempotencyKeySent = idempotencyKeySent;
    this.clock = clock;
  }

  /**
   * An outcome for a response, for testing classifiers.
   *
   * @param keySent whether the request carried an idempotency key
   * @param response the response the attempt got
   * @param attempt the attempt number, 1 for the first
   * @return the outcome
   */
  public static AttemptOutcome ofResponse(Response response, int attempt, boolean keySent) {
    Request request = response.request();
    return new AttemptOutcome(request, response, null, attempt, true,
        keySent || isIdempotentMethod(request.method()), null, keySent ? "test-key" : null, keySent,
        TimeSource.system());
  }

  /**
   * An outcome for an exception, for testing classifiers.
   *
   * @param mayHaveReachedServer false for a failure before any byte of the request was written
   * @param request the request as sent
   * @param exception the attempt's failure
   * @param attempt the attempt number, 1 for the first
   * @param keySent whether the request carried an idempotency key
   * @return the outcome
   */
  public static AttemptOutcome ofException(
      Request request, IOException exception, int attempt, boolean mayHaveReachedServer,
      boolean keySent) {
    return new AttemptOutcome(request, null, exception, attempt, mayHaveReachedServer,
        keySent || isIdempotentMethod(request.method()), null, keySent ? "test-key" : null, keySent,
        TimeSource.system());
  }

  /**
   * The request as sent in this attempt (with the idempotency key header when one was sent).
   *
   * @return the request as sent in this attempt (with the idempotency key header when one was
   *     sent)
   */
  public Request request() {
    return request;
  }

  /**
   * The response, when the server answered.
   *
   * @return the response, when the server answered
   */
  public Optional<Response> response() {
    return Optional.ofNullable(response);
  }

  /**
   * The status code of the response, or -1 when the attempt failed with an exception.
   *
   * @return the status code of the response, or -1 when the attempt failed with an exception
   */
  public int statusCode() {
    return response == null ? -1 : response.code();
  }

  /**
   * The failure, when the attempt produced no response.
   *
   * @return the failure, when the attempt produced no response
   */
  public Optional<IOException> exception() {
    return Optional.ofNullable(exception);
  }

  /**
   * 1 for the first attempt, 2 for the first retry, and so on.
   *
   * @return the attempt number: 1 for the first attempt, 2 for the first retry
   */
  public int attempt() {
    return attempt;
  }

  /**
   * False only when the attempt failed before any byte of the request was written to a connection
   * (DNS, connect or TLS handshake failure, or a network interceptor that threw before
   * {@code chain.proceed}), so the server cannot have processed it. The SDK knows this exactly: its
   * event listener hears OkHttp's {@code requestHeadersStart}, the moment writing starts.
   *
   * @return false when the request was certainly not sent; true otherwise
   */
  public boolean requestMayHaveReachedServer() {
    return requestMayHaveReachedServer;
  }

  /**
   * True when repeating the operation cannot cause a second effect: its method is idempotent
   * (RFC 9110 §9.2.2: GET, HEAD, OPTIONS, TRACE, PUT, DELETE) or it carries an idempotency key.
   *
   * @return whether the operation is idempotent
   */
  public boolean idempotent() {
    return idempotent;
  }

  /**
   * Whether this attempt's request carried the operation's idempotency key.
   *
   * @return whether this attempt's request carried the operation's idempotency key
   */
  public boolean idempotencyKeySent() {
    return idempotencyKeySent;
  }

  /**
   * The operation's idempotency key (sent or not).
   *
   * @return the operation's idempotency key (sent or not)
   */
  public String idempotencyKey() {
    return operationKey != null ? operationKey.get() : idempotencyKey;
  }

  /**
   * The delay asked for by the response's {@code Retry-After} header, parsed with
   * {@link RetryAfter#parse(String, Instant)}; empty when absent, malformed or negative.
   *
   * @return the delay asked for by {@code Retry-After}, or empty
   */
  public Optional<Duration> retryAfter() {
    if (response == null) {
      return Optional.empty();
    }
    String value = response.header("Retry-After");
    return value == null ? Optional.empty() : RetryAfter.parse(value, clock.now());
  }

  /**
   * True for the methods RFC 9110 §9.2.2 defines as idempotent: GET, HEAD, OPTIONS, TRACE, PUT and
   * DELETE.
   *
   * @param method an HTTP method name, e.g. {@code "POST"}
   * @return whether {@code method} is idempotent
   */
  public static boolean isIdempotentMethod(String method) {
    switch (method) {
      case "GET":
      case "HEAD":
      case "OPTIONS":
      case "TRACE":
      case "PUT":
      case "DELETE":
        return true;
      default:
        return false;
    }
  }

  @Override
  public String toString() {
    return "AttemptOutcome{attempt=" + attempt + ", " + request.method() + " " + request.url().host()
        + (response != null ? ", status=" + response.code() : ", exception=" + exception)
        + ", mayHaveReachedServer=" + requestMayHaveReachedServer + ", idempotent=" + idempotent + "}";
  }
}

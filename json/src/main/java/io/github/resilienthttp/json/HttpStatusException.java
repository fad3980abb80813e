package io.github.resilienthttp.json;

import io.github.resilienthttp.ResilientHttpException;
import java.util.Objects;
import java.util.Optional;
import okhttp3.Headers;

/**
 * The operation's final response was not successful (its status is not 2xx): thrown by
 * {@link JsonCodec#execute(io.github.resilienthttp.Operation, Class)} and its variants, after the
 * response was closed. Carries the status code, the response headers and, when the body was an
 * RFC 9457 {@code application/problem+json} document, its {@link ProblemDetails}.
 *
 * <p>Its {@link #reason()} is {@code status-NNN}. Its message names the status and, when present, the
 * problem's type and title (control characters removed, each cut to 200 characters); it never
 * contains the body, the problem's detail or any header value, so it is safe to log.
 *
 * <p>The headers and the problem are not serialized with the exception.
 */
public class HttpStatusException extends ResilientHttpException {
  private static final long serialVersionUID = 1L;
  private static final int MAX_MESSAGE_PART = 200;

  /** The final response's status code. */
  private final int statusCode;
  private final transient Headers headers;
  private final transient ProblemDetails problem;

  /**
   * Creates the exception.
   *
   * @param idempotencyKey the operation's key
   * @param idempotencyKeySent whether the key was sent
   * @param attempts how many attempts the operation started
   * @param statusCode the final response's status code
   * @param headers the final response's headers
   * @param problem the parsed problem body, or {@code null} when there was none
   */
  public HttpStatusException(
      String idempotencyKey, boolean idempotencyKeySent, int attempts, int statusCode,
      Headers headers, ProblemDetails problem) {
    super(describe(statusCode, problem), idempotencyKey, idempotencyKeySent, attempts,
        "status-" + statusCode, null);
    this.statusCode = statusCode;
    this.headers = Objects.requireNonNull(headers, "headers");
    this.problem = problem;
  }

  private static String describe(int statusCode, ProblemDetails problem) {
    StringBuilder sb = new StringBuilder("HTTP ").append(statusCode);
    if (problem != null) {
      sb.append(" (problem type=").append(sanitize(problem.type()));
      problem.title().ifPresent(t -> sb.append(", title=\"").append(sanitize(t)).append('"'));
      sb.append(')');
    }
    return sb.toString();
  }

  /** Keeps a server-supplied string from forging log lines or flooding them. */
  private static String sanitize(String s) {
    StringBuilder sb = new StringBuilder(Math.min(s.length(), MAX_MESSAGE_PART + 1));
    for (int i = 0; i < s.length() && sb.length() < MAX_MESSAGE_PART; i++) {
      char c = s.charAt(i);
      sb.append(Character.isISOControl(c) ? ' ' : c);
    }
    if (s.length() > MAX_MESSAGE_PART) {
      sb.append('…');
    }
    return sb.toString();
  }

  /**
   * The final response's status code, e.g. 404.
   *
   * @return the final response's status code, e.g
   */
  public int statusCode() {
    return statusCode;
  }

  /**
   * The final response's headers ({@link Headers#EMPTY} after deserialization).
   *
   * @return the final response's headers
   */
  public Headers headers() {
    return headers == null ? Headers.EMPTY : headers;
  }

  /**
   * The RFC 9457 problem details, when the response's content type was
   * {@code application/problem+json} and its body (at most
   * {@link ProblemDetails#MAX_PROBLEM_BYTES}) was a JSON object.
   *
   * @return the problem details, or empty
   */
  public Optional<ProblemDetails> problem() {
    return Optional.ofNullable(problem);
  }
}

package io.github.resilienthttp;

import io.github.resilienthttp.internal.classify.DefaultResponseClassifier;
import java.util.Objects;

/**
 * The pluggable contract that decides, for each attempt, whether the operation succeeded, may be
 * retried, may be retried only because it is idempotent, or failed for good.
 *
 * <p>The SDK acts on the decision: it never retries a {@link Decision.Kind#RETRY_IF_IDEMPOTENT}
 * outcome of an operation that is not idempotent, and it closes every response it does not return.
 * A classifier must be thread-safe, fast and must not throw; it must not consume or close the
 * response body.
 *
 * <h2>Composition</h2>
 * Handle your own cases and defer the rest, without copying the defaults:
 * <pre>{@code
 * ResponseClassifier mine = outcome ->
 *     outcome.statusCode() == 418 ? Decision.retry("teapot") : Decision.defer();
 * ResponseClassifier contract = mine.orElse(ResponseClassifier.defaults());
 * }</pre>
 * A decision of {@link Decision.Kind#DEFER} left at the end of a chain is resolved by
 * {@link #defaults()}.
 *
 * <h2>The defaults</h2>
 * See {@link #defaults()}.
 */
@FunctionalInterface
public interface ResponseClassifier {

  /**
   * Decides about one attempt.
   *
   * @param outcome the attempt's request and its response or exception
   * @return never {@code null}
   */
  Decision classify(AttemptOutcome outcome);

  /**
   * A classifier that asks this one first and, when this one returns {@link Decision#defer()},
   * asks {@code next}.
   *
   * @param next the classifier asked when this one defers
   * @return the combined classifier
   */
  default ResponseClassifier orElse(ResponseClassifier next) {
    Objects.requireNonNull(next, "next");
    ResponseClassifier first = this;
    return outcome -> {
      Decision d = first.classify(outcome);
      return d.kind() == Decision.Kind.DEFER ? next.classify(outcome) : d;
    };
  }

  /**
   * The default contract, following RFC 9110 and the IETF draft "The Idempotency-Key HTTP Header
   * Field" (draft-ietf-httpapi-idempotency-key-header):
   *
   * <table>
   * <caption>Default classification</caption>
   * <tr><th>Attempt outcome</th><th>Decision</th><th>Reason</th></tr>
   * <tr><td>exception before the request was written (DNS, connect, TLS handshake, a network
   *     interceptor that throws)</td><td>RETRY</td><td>{@code not-sent}</td></tr>
   * <tr><td>HTTP/2 stream refused ({@code REFUSED_STREAM}, also above a GOAWAY's last-stream-id;
   *     RFC 9113 §8.7, §6.8)</td><td>RETRY</td><td>{@code http2-refused-stream}</td></tr>
   * <tr><td>HTTP/2 connection shutting down before the stream was made</td><td>RETRY</td>
   *     <td>{@code http2-connection-shutdown}</td></tr>
   * <tr><td>TLS certificate or hostname verification failure</td><td>FAIL</td>
   *     <td>{@code tls-untrusted}</td></tr>
   * <tr><td>redirect or authentication loop ({@code Too many follow-up requests})</td><td>FAIL</td>
   *     <td>{@code too-many-follow-ups}</td></tr>
   * <tr><td>exception after the request was written (timeout, reset, EOF)</td>
   *     <td>RETRY_IF_IDEMPOTENT</td><td>{@code outcome-unknown}</td></tr>
   * <tr><td>1xx, 2xx, 3xx</td><td>SUCCESS</td><td>{@code status-NNN}</td></tr>
   * <tr><td>408 Request Timeout</td><td>RETRY</td><td>{@code status-408}</td></tr>
   * <tr><td>429 Too Many Requests, 503 Service Unavailable (honouring {@code Retry-After})</td>
   *     <td>RETRY</td><td>{@code status-429}, {@code status-503}</td></tr>
   * <tr><td>409 Conflict on a request that carried a key, when the answer says the key is in use:
   *     a {@code Retry-After}, or a JSON body whose {@code type} or {@code code} names
   *     {@code idempotency}</td><td>RETRY</td><td>{@code idempotency-key-in-progress}</td></tr>
   * <tr><td>422 on a request that carried a key, with a JSON body whose {@code type} or
   *     {@code code} names {@code idempotency} (key reused with a different payload)</td>
   *     <td>FAIL</td><td>{@code idempotency-key-mismatch}</td></tr>
   * <tr><td>400 on a request that carried a key, with {@code "type": "idempotency_error"}
   *     (Stripe)</td><td>FAIL</td><td>{@code idempotency-key-mismatch}</td></tr>
   * <tr><td>other 4xx</td><td>FAIL</td><td>{@code status-NNN}</td></tr>
   * <tr><td>500, 502, 504 and other 5xx except 501 and 505 (honouring {@code Retry-After})</td>
   *     <td>RETRY_IF_IDEMPOTENT</td><td>{@code status-NNN}</td></tr>
   * <tr><td>501 Not Implemented, 505 HTTP Version Not Supported, any code outside 100..599</td>
   *     <td>FAIL</td><td>{@code status-NNN}</td></tr>
   * </table>
   *
   * <p>Bodies are looked at only for those 409, 422 and 400 answers, only with a JSON media type,
   * and only their first 8 KiB, with {@link okhttp3.Response#peekBody(long)}: the caller's body is
   * untouched. An ordinary 409 conflict or 422 validation error is a final {@code status-NNN}.
   *
   * <p>429 and 503 are treated as "not processed" (the server refused the request); a stricter
   * contract can demote 503 to outcome unknown:
   * {@code o -> o.statusCode() == 503 ? Decision.retryIfIdempotent("status-503", o.retryAfter()) :
   * Decision.defer()}.
   *
   * @return a stateless, thread-safe classifier
   */
  static ResponseClassifier defaults() {
    return DefaultResponseClassifier.INSTANCE;
  }
}

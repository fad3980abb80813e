package io.github.resilienthttp.internal.classify;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.internal.okhttp.OriginGuard;
import java.io.IOException;
import java.net.ProtocolException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.Optional;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;

/** See {@link ResponseClassifier#defaults()}. Stateless. */
public final class DefaultResponseClassifier implements ResponseClassifier {
  public static final DefaultResponseClassifier INSTANCE = new DefaultResponseClassifier();

  private static final Decision NOT_SENT = Decision.retry("not-sent");
  private static final Decision OUTCOME_UNKNOWN = Decision.retryIfIdempotent("outcome-unknown");
  private static final Decision TLS_UNTRUSTED = Decision.fail("tls-untrusted");
  private static final Decision KEY_MISMATCH = Decision.fail("idempotency-key-mismatch");
  private static final Decision REFUSED_STREAM = Decision.retry("http2-refused-stream");
  private static final Decision CONNECTION_SHUTDOWN = Decision.retry("http2-connection-shutdown");
  private static final Decision TOO_MANY_FOLLOW_UPS = Decision.fail("too-many-follow-ups");
  private static final Decision OTHER_ORIGIN = Decision.fail(OriginGuard.REASON);
  /** Stripe's {@code error.type} of a key reused with other parameters (a 400). */
  static final String STRIPE_IDEMPOTENCY_ERROR = "idempotency_error";

  /**
   * Decisions without a server delay are the same every time: built once, per status, so that the
   * common path allocates nothing. Filled in the static initializer and never changed.
   */
  private static final String[] REASONS = new String[600];
  private static final Decision[] SUCCESS = new Decision[400];
  private static final Decision[] FAIL = new Decision[600];

  static {
    for (int code = 100; code < 600; code++) {
      REASONS[code] = "status-" + code;
      if (code < 400) {
        SUCCESS[code] = Decision.success(REASONS[code]);
      } else {
        FAIL[code] = Decision.fail(REASONS[code]);
      }
    }
  }

  private DefaultResponseClassifier() {}

  @Override
  public Decision classify(AttemptOutcome outcome) {
    if (outcome.exception().isPresent()) {
      return classifyException(outcome.exception().get(), outcome.requestMayHaveReachedServer());
    }
    return classifyStatus(outcome);
  }

  private static Decision classifyException(IOException e, boolean mayHaveReachedServer) {
    if (e instanceof SSLPeerUnverifiedException
        || (e instanceof SSLHandshakeException && e.getCause() instanceof CertificateException)) {
      return TLS_UNTRUSTED;
    }
    if (OriginGuard.refused(e)) {
      return OTHER_ORIGIN; // the same hop would be refused again
    }
    String refused = RefusedStream.reason(e);
    if (refused != null) {
      // RFC 9113 §8.7 and §6.8: the server did not process the stream, whatever was written.
      return refused.equals("http2-refused-stream") ? REFUSED_STREAM : CONNECTION_SHUTDOWN;
    }
    if (e instanceof ProtocolException && e.getMessage() != null
        && e.getMessage().startsWith("Too many follow-up requests")) {
      // A redirect (or authentication) loop: every retry would loop again.
      return TOO_MANY_FOLLOW_UPS;
    }
    return mayHaveReachedServer ? OUTCOME_UNKNOWN : NOT_SENT;
  }

  private static Decision classifyStatus(AttemptOutcome outcome) {
    int code = outcome.statusCode();
    if (code >= 100 && code < 400) {
      return SUCCESS[code];
    }
    switch (code) {
      case 408:
        return Decision.retry(reason(code));
      case 429:
      case 503:
        return Decision.retry(reason(code), outcome.retryAfter());
      case 409:
        // In progress only when the server says so (a Retry-After, or a body naming the key):
        // a healthy API answers 409 for ordinary conflicts too, and those are final.
        if (outcome.idempotencyKeySent()) {
          Optional<Duration> retryAfter = outcome.retryAfter();
          if (retryAfter.isPresent() || IdempotencySignal.aboutKey(outcome.response().get())) {
            return Decision.retry("idempotency-key-in-progress", retryAfter);
          }
        }
        return fail(code);
      case 422:
        return outcome.idempotencyKeySent() && IdempotencySignal.aboutKey(outcome.response().get())
            ? KEY_MISMATCH : fail(code);
      case 400:
        return outcome.idempotencyKeySent()
            && IdempotencySignal.hasMember(outcome.response().get(), STRIPE_IDEMPOTENCY_ERROR)
            ? KEY_MISMATCH : fail(code);
      case 501:
      case 505:
        return fail(code);
      default:
        if (code >= 500 && code < 600) {
          return Decision.retryIfIdempotent(reason(code), outcome.retryAfter());
        }
        return fail(code);
    }
  }

  /**
   * What this classifier answers for a response with {@code code}, when that needs no more of the
   * outcome than its status (a success or a redirect, 1xx to 3xx); otherwise {@code null}. The
   * engine asks this first, so that a healthy answer costs no {@link AttemptOutcome}.
   *
   * @param code the response's status code
   * @return the decision, or {@code null} when {@link #classify} must decide
   */
  public static Decision success(int code) {
    return code >= 100 && code < 400 ? SUCCESS[code] : null;
  }

  private static String reason(int code) {
    return code >= 100 && code < 600 ? REASONS[code] : "status-" + code;
  }

  private static Decision fail(int code) {
    return code >= 400 && code < 600 ? FAIL[code] : Decision.fail(reason(code));
  }

  @Override
  public String toString() {
    return "ResponseClassifier.defaults()";
  }
}

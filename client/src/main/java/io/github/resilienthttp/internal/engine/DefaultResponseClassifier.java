package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.ResponseClassifier;
import java.io.IOException;
import java.security.cert.CertificateException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;

/** See {@link ResponseClassifier#defaults()}. Stateless. */
public final class DefaultResponseClassifier implements ResponseClassifier {
  public static final DefaultResponseClassifier INSTANCE = new DefaultResponseClassifier();

  private static final Decision NOT_SENT = Decision.retry("not-sent");
  private static final Decision OUTCOME_UNKNOWN = Decision.retryIfIdempotent("outcome-unknown");
  private static final Decision TLS_UNTRUSTED = Decision.fail("tls-untrusted");
  private static final Decision KEY_MISMATCH = Decision.fail("idempotency-key-mismatch");

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
        return outcome.idempotencyKeySent()
            ? Decision.retry("idempotency-key-in-progress", outcome.retryAfter())
            : fail(code);
      case 422:
        return outcome.idempotencyKeySent() ? KEY_MISMATCH : fail(code);
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

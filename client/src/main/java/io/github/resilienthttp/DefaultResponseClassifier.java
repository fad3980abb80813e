package io.github.resilienthttp;

import java.io.IOException;
import java.security.cert.CertificateException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;

/** See {@link ResponseClassifier#defaults()}. Stateless. */
final class DefaultResponseClassifier implements ResponseClassifier {
  static final DefaultResponseClassifier INSTANCE = new DefaultResponseClassifier();

  private static final Decision NOT_SENT = Decision.retry("not-sent");
  private static final Decision OUTCOME_UNKNOWN = Decision.retryIfIdempotent("outcome-unknown");
  private static final Decision TLS_UNTRUSTED = Decision.fail("tls-untrusted");
  private static final Decision KEY_MISMATCH = Decision.fail("idempotency-key-mismatch");

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
      return Decision.success(reason(code));
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
            : Decision.fail(reason(code));
      case 422:
        return outcome.idempotencyKeySent() ? KEY_MISMATCH : Decision.fail(reason(code));
      case 501:
      case 505:
        return Decision.fail(reason(code));
      default:
        if (code >= 500 && code < 600) {
          return Decision.retryIfIdempotent(reason(code), outcome.retryAfter());
        }
        return Decision.fail(reason(code));
    }
  }

  private static String reason(int code) {
    return "status-" + code;
  }

  @Override
  public String toString() {
    return "ResponseClassifier.defaults()";
  }
}

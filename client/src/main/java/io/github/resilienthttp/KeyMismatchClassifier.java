package io.github.resilienthttp;

import io.github.resilienthttp.internal.classify.AnswerInContext;
import io.github.resilienthttp.internal.classify.IdempotencySignal;
import io.github.resilienthttp.internal.util.Ranges;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which statuses mean "this idempotency key was used with another request" for a server that
 * answers mismatches in its own way. The default classifier reads a {@code 422} (and, in context,
 * a {@code 417}) whose body names the key, and Stripe's {@code 400}, as
 * {@code idempotency-key-mismatch}; this classifier adds the statuses you name: an answer with one of
 * them, to a request that carried a key, whose body names the key ({@code idempotency} or
 * {@code idempotent} in a JSON {@code type}/{@code code}, or in a text body's first 8 KiB), is
 * {@link Decision#fail(String) FAIL} {@code idempotency-key-mismatch}. Everything else is deferred to
 * the defaults.
 *
 * <pre>{@code
 * ResilientHttpClient.wrap(okHttp).classifier(KeyMismatchClassifier.statuses(400, 422)).build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class KeyMismatchClassifier implements ResponseClassifier {
  private static final Decision MISMATCH = Decision.fail("idempotency-key-mismatch");

  private final Set<Integer> statuses;

  private KeyMismatchClassifier(Set<Integer> statuses) {
    this.statuses = statuses;
  }

  /**
   * A classifier for these mismatch statuses.
   *
   * @param statuses status codes, each 400..499
   * @return the classifier
   * @throws IllegalArgumentException when none is given or one is outside 400..499
   */
  public static KeyMismatchClassifier statuses(int... statuses) {
    if (statuses.length == 0) throw new IllegalArgumentException("statuses: none given");
    for (int s : statuses) {
      Ranges.check("statuses", s, 400, 499);
    }
    return new KeyMismatchClassifier(Arrays.stream(statuses).boxed().collect(Collectors.toUnmodifiableSet()));
  }

  @Override
  public Decision classify(AttemptOutcome outcome) {
    if (outcome.response().isEmpty() || !outcome.idempotencyKeySent() || !statuses.contains(outcome.statusCode())) {
      return Decision.defer();
    }
    var response = outcome.response().get();
    return IdempotencySignal.aboutKey(response) || AnswerInContext.namesKey(response) ? MISMATCH : Decision.defer();
  }

  @Override
  public String toString() {
    return "KeyMismatchClassifier" + statuses;
  }
}

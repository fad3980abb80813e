package io.github.resilienthttp.testkit.probe;

import java.util.Objects;

/**
 * The outcome of one {@link ProbeCheck}: its verdict, the evidence it rests on (statuses, resource
 * ids, replay headers, as the server sent them) and how many requests it sent. Immutable.
 *
 * @param check the check
 * @param verdict pass, fail or not applicable
 * @param evidence what the server answered, in one line
 * @param requests requests this check sent (a dropped one counts)
 */
public record CheckResult(ProbeCheck check, Verdict verdict, String evidence, int requests) {

  /**
   * Validates the components.
   *
   * @param check the check
   * @param verdict the verdict
   * @param evidence the evidence
   * @param requests zero or more
   */
  public CheckResult {
    Objects.requireNonNull(check, "check");
    Objects.requireNonNull(verdict, "verdict");
    Objects.requireNonNull(evidence, "evidence");
    if (requests < 0) {
      throw new IllegalArgumentException("requests must be >= 0 but was " + requests);
    }
  }
}

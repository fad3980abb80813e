package io.github.resilienthttp;

import io.github.resilienthttp.internal.util.Ranges;
import java.time.Instant;
import java.util.Objects;

/**
 * An intent parked in an {@link Outbox} because its operation ended without a definite outcome: its
 * token, why it was parked, and when it is next due. Immutable.
 *
 * @param token the intent's resume token (key, key age, method and URL, status resource if accepted)
 * @param reason the {@link OperationFailure#reason()} that parked it, e.g. {@code outcome-unknown}
 * @param parkedAt when it was first parked
 * @param tries how many times a resumer has tried it
 * @param dueAt when a resumer may next try it
 */
public record OutboxEntry(ResumeToken token, String reason, Instant parkedAt, int tries,
    Instant dueAt) {

  /**
   * Checks the fields.
   *
   * @param token the intent's resume token
   * @param reason why it was parked
   * @param parkedAt when it was first parked
   * @param tries how many times a resumer has tried it
   * @param dueAt when a resumer may next try it
   */
  public OutboxEntry {
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(parkedAt, "parkedAt");
    Objects.requireNonNull(dueAt, "dueAt");
    Ranges.atLeast("tries", tries, 0);
  }

  /**
   * This entry after one more try, due again at {@code next}.
   *
   * @param next when it is due again
   * @return the entry
   */
  public OutboxEntry triedAgainAt(Instant next) {
    return new OutboxEntry(token, reason, parkedAt, tries + 1, next);
  }
}

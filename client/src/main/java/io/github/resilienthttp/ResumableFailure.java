package io.github.resilienthttp;

import java.util.Optional;

/**
 * A failure of an operation that the server had accepted ({@code 202}): it carries the
 * {@link ResumeToken} with which {@link ResilientHttpClient#resume(ResumeToken, AsyncOperationPolicy)}
 * continues waiting, in this process or a restarted one. The server may have acted on it:
 * {@link #mayHaveExecuted()} is always {@code true}.
 */
public interface ResumableFailure extends OperationFailure {

  /** {@return the token to resume the wait with} */
  ResumeToken resumeToken();

  /**
   * The resume token of {@code failure} or of any of its causes and suppressed exceptions.
   *
   * @param failure an exception from an operation, or {@code null}
   * @return the token, or empty when the operation was never accepted
   */
  static Optional<ResumeToken> of(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ResumableFailure r) {
        return Optional.of(r.resumeToken());
      }
      for (Throwable s : t.getSuppressed()) {
        if (s instanceof ResumableFailure r) {
          return Optional.of(r.resumeToken());
        }
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return Optional.empty();
  }
}

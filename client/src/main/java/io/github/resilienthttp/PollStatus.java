package io.github.resilienthttp;

import java.util.Objects;
import java.util.Optional;
import okhttp3.HttpUrl;

/**
 * What one poll of an asynchronous operation's status resource said: the operation's state, where its
 * final result is (when the status says), and the status body for people (a failed operation's problem
 * details). Made by a {@link StatusContract}. Immutable and thread-safe.
 */
public final class PollStatus {
  /** The state of an asynchronous operation, as its status resource reports it. */
  public enum State {
    /** Not finished (accepted, queued, running): poll again. */
    RUNNING,
    /** Finished with success: fetch the result. */
    SUCCEEDED,
    /** Finished with failure: surfaces as {@link AsyncOperationFailedException}. */
    FAILED,
    /** Cancelled on the server: surfaces as {@link AsyncOperationFailedException}. */
    CANCELED;

    /** {@return whether the operation is over} */
    public boolean isTerminal() {
      return this != RUNNING;
    }
  }

  private final State state;
  private final HttpUrl resultLocation;
  private final String details;

  private PollStatus(State state, HttpUrl resultLocation, String details) {
    this.state = Objects.requireNonNull(state, "state");
    this.resultLocation = resultLocation;
    this.details = details == null ? "" : details;
  }

  /** {@return a running status} */
  public static PollStatus running() {
    return new PollStatus(State.RUNNING, null, null);
  }

  /**
   * A status.
   *
   * @param state the state
   * @param resultLocation where to GET the final result, or {@code null} (the status body is the result)
   * @param details the status body or a problem description, for people; may be {@code null}
   * @return the status
   */
  public static PollStatus of(State state, HttpUrl resultLocation, String details) {
    return new PollStatus(state, resultLocation, details);
  }

  /** {@return the state} */
  public State state() {
    return state;
  }

  /** {@return where to GET the final result, if the status says} */
  public Optional<HttpUrl> resultLocation() {
    return Optional.ofNullable(resultLocation);
  }

  /** {@return the status body or problem description, for people; empty when none} */
  public String details() {
    return details;
  }

  @Override
  public String toString() {
    return "PollStatus{" + state + (resultLocation == null ? "" : ", result=" + resultLocation.redact())
        + "}";
  }
}

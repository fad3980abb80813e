package io.github.resilienthttp;

import io.github.resilienthttp.internal.async.StatusWords;
import java.util.Objects;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;
import okhttp3.Response;

/**
 * Reads an asynchronous operation's state from one poll of its status resource: the pluggable,
 * composable terminal-state contract of {@link AsyncOperationPolicy} (as {@link ResponseClassifier}
 * is for attempts). Return {@code null} for "this contract cannot tell", so that
 * {@link #orElse(StatusContract)} asks the next one; when no contract can tell, the waiter fails the
 * wait with {@link PollFailedException} (reason {@code unrecognized-status}) rather than polling for
 * ever.
 *
 * <p>Implementations must be thread-safe and must not read or close the response's body: the waiter
 * has already read it (bounded by {@link AsyncOperationPolicy#maxStatusBodyBytes()}) and passes it.
 */
@FunctionalInterface
public interface StatusContract {

  /**
   * The operation's state according to this poll, or {@code null} when this contract cannot tell.
   *
   * @param poll the poll's response (its body already read: use {@code body})
   * @param body the poll's body, decoded as UTF-8, at most {@link AsyncOperationPolicy#maxStatusBodyBytes()}
   * @return the status, or {@code null}
   */
  PollStatus classify(Response poll, String body);

  /**
   * This contract, then {@code next} when this one cannot tell.
   *
   * @param next the contract to ask next
   * @return the composed contract
   */
  default StatusContract orElse(StatusContract next) {
    Objects.requireNonNull(next, "next");
    return (poll, body) -> {
      PollStatus s = classify(poll, body);
      return s != null ? s : next.classify(poll, body);
    };
  }

  /**
   * The default: {@link #seeOther()}, then {@link #jsonStatusField(String) jsonStatusField("status")},
   * then {@link #statusCodes()}.
   *
   * @return the default contract
   */
  static StatusContract defaults() {
    return seeOther().orElse(jsonStatusField("status")).orElse(statusCodes());
  }

  /**
   * A {@code 303 See Other} means done, with the result at its {@code Location}. OkHttp follows
   * redirects by default: then the poll's response is the result itself, and this contract sees the
   * 303 as its {@link Response#priorResponse()}.
   *
   * @return the contract
   */
  static StatusContract seeOther() {
    return (poll, body) -> {
      Response prior = poll.priorResponse();
      if (poll.code() != 303 && prior != null && prior.code() == 303) {
        // OkHttp followed the 303 (followRedirects, its default): this response is the result.
        return PollStatus.of(PollStatus.State.SUCCEEDED, null, body);
      }
      if (poll.code() != 303) {
        return null;
      }
      String location = poll.header("Location");
      HttpUrl url = location == null ? null : poll.request().url().resolve(location);
      return PollStatus.of(PollStatus.State.SUCCEEDED, url, body);
    };
  }

  /**
   * Reads a JSON string field such as {@code "status": "Running"} (Azure, most REST APIs) with a small
   * bounded pattern (no JSON library in the core): case-insensitive values {@code notstarted,
   * accepted, queued, pending, running, inprogress, in_progress, processing} are running;
   * {@code succeeded, success, completed, complete, done} succeeded; {@code failed, failure, error}
   * failed; {@code canceled, cancelled} canceled. A {@code "resourceLocation"} string field, when
   * present, is the result's location. Another value, or no such field, cannot tell.
   *
   * @param field the field's name
   * @return the contract
   */
  static StatusContract jsonStatusField(String field) {
    Pattern pattern = StatusWords.fieldPattern(field);
    return (poll, body) -> {
      if (poll.code() < 200 || poll.code() > 299) {
        return null;
      }
      String value = StatusWords.stringField(pattern, body);
      if (value == null) {
        return null;
      }
      PollStatus.State state = StatusWords.of(value);
      if (state == null) {
        return null;
      }
      String location = StatusWords.stringField(StatusWords.RESOURCE_LOCATION, body);
      HttpUrl url = location == null ? null : poll.request().url().resolve(location);
      return PollStatus.of(state, url, body);
    };
  }

  /**
   * By status code alone, as a {@code Location}-polled resource answers: {@code 202} is running;
   * {@code 200}, {@code 201} and {@code 204} mean done, the body being the result.
   *
   * @return the contract
   */
  static StatusContract statusCodes() {
    return (poll, body) -> switch (poll.code()) {
      case 202 -> PollStatus.running();
      case 200, 201, 204 -> PollStatus.of(PollStatus.State.SUCCEEDED, null, body);
      default -> null;
    };
  }
}

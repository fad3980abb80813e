package io.github.resilienthttp.internal.classify;

import io.github.resilienthttp.Decision;
import io.github.resilienthttp.OutcomeUnknownAnswerException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import okhttp3.MediaType;
import okhttp3.Response;

/**
 * What an answer means given the operation's earlier attempts, applied by the retry loop after the
 * classifier (the classifier sees one attempt; this sees the operation):
 *
 * <ul>
 *   <li><b>A replay is the recorded outcome.</b> A response marked as a replay
 *       ({@code Idempotent-Replayed: true}, the client's configured replay header, or the names other
 *       middlewares use: {@code Idempotency-Replayed}, {@code X-Idempotent-Replayed},
 *       {@code X-Idempotency-Replayed}, {@code X-Idempotency-Replay}, {@code Idempotent-Replay}) is
 *       never retried: a retry could only replay it again. Reason {@code idempotent-replay}.
 *   <li><b>A 409 to a retry is about the earlier attempt.</b> On a keyed request's retry after an
 *       attempt that may have reached the server, a bare {@code 409} (no {@code Retry-After}, no
 *       body naming the key: some middlewares answer "in progress" with {@code <pre>Conflict</pre>},
 *       others answer every replay with {@code 409}) is retried like an in-progress answer, reason
 *       {@code idempotency-key-in-progress-or-replay}; if the operation must end on such a 409 it
 *       ends as {@link OutcomeUnknownAnswerException}, never as a definite failure. A first attempt's
 *       bare 409 stays a final {@code status-409}.
 *   <li><b>Mismatches in other words.</b> A {@code 422} or {@code 417} to a keyed request whose body
 *       names the key ({@code idempotency} or {@code idempotent} in a JSON {@code type}/{@code code},
 *       or anywhere in a text body's first 8 KiB) is {@code idempotency-key-mismatch}; the default
 *       classifier already reads JSON 422s and Stripe's 400.
 * </ul>
 *
 * <p>Only decisions of the default classifier's own reasons are changed, so a user classifier that
 * decides a 409 (or anything else) itself is respected. Stateless. Not API.
 */
public final class AnswerInContext {
  /** Replay markers besides the client's configured header; matched case-insensitively. */
  static final List<String> REPLAY_HEADERS = List.of("Idempotent-Replayed", "Idempotency-Replayed",
      "X-Idempotent-Replayed", "X-Idempotency-Replayed", "X-Idempotency-Replay", "Idempotent-Replay");
  static final String REPLAY = "idempotent-replay";
  static final String EARLIER_ATTEMPT = "idempotency-key-in-progress-or-replay";
  static final String IN_PROGRESS = "idempotency-key-in-progress";
  private static final Decision REPLAY_DECISION = Decision.fail(REPLAY);
  private static final Decision MISMATCH = Decision.fail("idempotency-key-mismatch");

  private AnswerInContext() {}

  /**
   * The decision for this attempt in the operation's context.
   *
   * @param decision the classifier's decision
   * @param response the attempt's response, or {@code null}
   * @param keySent whether the key was sent
   * @param attempt the attempt's number, from 1
   * @param earlierMayHaveReachedServer whether an earlier attempt may have reached the server
   * @param replayHeader the client's replay header
   * @return the decision to act on
   */
  public static Decision apply(Decision decision, Response response, boolean keySent, int attempt,
      boolean earlierMayHaveReachedServer, String replayHeader) {
    if (response == null || !keySent) return decision;
    if (decision.isRetryable() && isReplay(response, replayHeader)) return REPLAY_DECISION;
    int code = response.code();
    if (code == 409 && attempt > 1 && earlierMayHaveReachedServer && decision.kind() == Decision.Kind.FAIL
        && isOwn(decision, code)) {
      return Decision.retry(EARLIER_ATTEMPT, Optional.<Duration>empty());
    }
    if ((code == 422 || code == 417) && decision.kind() == Decision.Kind.FAIL && isOwn(decision, code)
        && (IdempotencySignal.aboutKey(response) || namesKey(response))) {
      return MISMATCH;
    }
    return decision;
  }

  /**
   * Whether {@code decision} is the plain one for {@code code} (its reason {@code status-<code>}),
   * not a classifier's own: only a plain answer is read in context.
   */
  private static boolean isOwn(Decision decision, int code) {
    return ("status-" + code).equals(decision.reason());
  }

  /**
   * Whether the operation, ending on this answer without a definite outcome, must end as outcome
   * unknown: a 409 about an earlier attempt that may have reached the server.
   *
   * @param decision the decision acted on
   * @param response the last response
   * @param attempt its attempt number
   * @param earlierMayHaveReachedServer whether an earlier attempt may have reached the server
   * @return true to end with {@link OutcomeUnknownAnswerException} (built by the engine's
   *     {@code Failures})
   */
  public static boolean endsUnknown(Decision decision, Response response, int attempt,
      boolean earlierMayHaveReachedServer) {
    return response != null && response.code() == 409 && attempt > 1 && earlierMayHaveReachedServer
        && (EARLIER_ATTEMPT.equals(decision.reason()) || IN_PROGRESS.equals(decision.reason()));
  }

  static boolean isReplay(Response response, String replayHeader) {
    if (marked(response.header(replayHeader))) return true;
    for (String name : REPLAY_HEADERS) {
      if (marked(response.header(name))) return true;
    }
    return false;
  }

  private static boolean marked(String value) {
    if (value == null) return false;
    String v = value.trim().toLowerCase(Locale.ROOT);
    return v.equals("true") || v.equals("1") || v.equals("yes");
  }

  /**
   * Whether a text or JSON body names the idempotency key ({@code idempotency} or {@code idempotent}
   * in its first 8 KiB, read with {@link Response#peekBody(long)}).
   *
   * @param response the response
   * @return true when it does
   */
  public static boolean namesKey(Response response) {
    MediaType type = response.body().contentType();
    if (type != null && !type.type().equalsIgnoreCase("text") && !type.subtype().toLowerCase(Locale.ROOT).contains("json")) {
      return false;
    }
    try {
      String text = response.peekBody(IdempotencySignal.PEEK_LIMIT).string().toLowerCase(Locale.ROOT);
      return text.contains("idempotency") || text.contains("idempotent");
    } catch (IOException | RuntimeException unreadable) {
      return false;
    }
  }
}

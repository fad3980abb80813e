package io.github.resilienthttp.internal.async;

import static io.github.resilienthttp.internal.util.Floors.MIN_ATTEMPT_NANOS;

import io.github.resilienthttp.AsyncOperationDeadlineExceededException;
import io.github.resilienthttp.AsyncOperationFailedException;
import io.github.resilienthttp.AsyncOperationInterruptedException;
import io.github.resilienthttp.AsyncOperationPolicy;
import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.KeyRetentionExceededException;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationInterruptedException;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.PollFailedException;
import io.github.resilienthttp.PollStatus;
import io.github.resilienthttp.ResumableFailure;
import io.github.resilienthttp.ResumeToken;
import io.github.resilienthttp.RetryAfter;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.internal.engine.ClientLifecycle;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.Execution;
import io.github.resilienthttp.internal.engine.KeyDecision;
import io.github.resilienthttp.internal.engine.Run;
import io.github.resilienthttp.internal.engine.Step;
import io.github.resilienthttp.internal.engine.Steps;
import io.github.resilienthttp.internal.okhttp.OriginGuard;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The 202 wait as steps ({@link Steps}): the submit (the run's own attempts), or a resume from a
 * token; then polls of the status resource until the {@link io.github.resilienthttp.StatusContract}
 * reads a terminal state; then the result fetch. Written once: a {@link Run} drives it blocking
 * ({@code awaitCompletion}, {@code resume}) or without a thread ({@code awaitCompletionAsync},
 * {@code resumeAsync}), under the run's one deadline and one cancel signal. Each poll and the result
 * fetch are GET {@link Operation}s of their own (classified, retried on transient failure, bounded
 * by the budget, the breaker and the bulkhead), whose deadline is the time left and whose first
 * attempt is an {@link AttemptKind#POLL}; they carry the submit's key for correlation in listeners
 * but never send it. The submit is never re-sent once accepted.
 *
 * <p>One machine per wait, driven by one run (one step at a time). Not API.
 */
public final class PollLoop implements Steps {
  private static final Logger log = LoggerFactory.getLogger(PollLoop.class);

  private enum Stage { SUBMIT, WAIT, POLL, FETCH }

  private final ClientRuntime runtime;
  private final AsyncOperationPolicy policy;
  private final TimeSource time;
  private final Run run;
  /** The submit, or {@code null} for a resumed wait. */
  private final Request submit;
  /** The submit's running state until it ended (then dropped: the wait keeps none of it). */
  private Execution submitted;
  private Instant keyCreatedAt;
  private OperationInfo info;
  private ResumeToken token;
  /** How polls and the result fetch are built: the origin rule and the carried headers. */
  private FollowUpCalls followUps;
  private Stage stage = Stage.SUBMIT;
  private int polls;
  private int attempts;
  /** The poll or fetch in flight; dropped once it answered, so a wait keeps nothing of it. */
  private Operation sent;

  private PollLoop(ClientRuntime runtime, AsyncOperationPolicy policy, Run run, Request submit,
      Execution submitted, Instant keyCreatedAt, ResumeToken token) {
    this.runtime = runtime;
    this.policy = policy;
    this.time = runtime.timeSource();
    this.run = run;
    this.submit = submit;
    this.submitted = submitted;
    this.keyCreatedAt = keyCreatedAt;
    this.token = token;
  }

  /**
   * The wait of an operation that submits {@code submit} with {@code run}'s own attempts.
   *
   * @param runtime the client's runtime
   * @param policy how to wait
   * @param run the run that owns the wait (its attempts are the submit)
   * @param submit the submitted request, as given
   * @param op the submit's running state (the run's attempts)
   * @param keyCreatedAt when the submit's key was made (for the resume token)
   * @return the steps
   */
  public static PollLoop submit(ClientRuntime runtime, AsyncOperationPolicy policy, Run run,
      Request submit, Execution op, Instant keyCreatedAt) {
    return new PollLoop(runtime, policy, run, submit, op, keyCreatedAt, null);
  }

  /**
   * The wait of an accepted operation, resumed from its token: a run of its own.
   *
   * @param runtime the client's runtime
   * @param policy how to wait
   * @param resumed the (verified) token of an accepted operation
   * @return the run, started, to {@link Run#execute()} or {@link Run#executeAsync()}
   */
  public static Run resume(ClientRuntime runtime, AsyncOperationPolicy policy,
      ResumeToken resumed) {
    Run run = new Run(runtime);
    run.start(policy.deadline().orElse(runtime.retryPolicy().deadline()),
        new PollLoop(runtime, policy, run, null, null, null, resumed));
    return run;
  }

  /** What comes after a poll: wait and poll again, fetch the result, or return a response. */
  private record Next(Duration delay, boolean fromRetryAfter, HttpUrl fetch, Response done) {}

  @Override
  public Step start() throws IOException {
    if (submit != null) {
      followUps = followUpsOf(submit.url(), submit);
      return Step.ATTEMPTS;
    }
    followUps = followUpsOf(token.url(), null);
    info = infoOf(null, token);
    checkOrigin(token.statusUrl().orElseThrow(), token.url());
    runtime.listeners().send("asyncOperationAccepted", l -> l.asyncOperationAccepted(info, token));
    // A restarted process wants the status now: the first poll of a resume does not wait.
    return pollAfter(Duration.ZERO, false);
  }

  @Override
  public Step answered(Response r) throws IOException {
    switch (stage) {
      case SUBMIT: {
        submitted();
        if (r.code() != 202) {
          return new Step.Done(r); // finished at once (or failed for good): nothing to wait for
        }
        Duration first = accept(r);
        return pollAfter(first, retryAfterOf(r, first));
      }
      case POLL: {
        counted();
        Next next = afterPoll(r);
        if (next.done() != null) {
          return new Step.Done(next.done());
        } else if (next.fetch() != null) {
          checkDeadline(Duration.ZERO);
          stage = Stage.FETCH;
          return get(next.fetch());
        }
        return pollAfter(next.delay(), next.fromRetryAfter());
      }
      default:
        counted();
        return new Step.Done(r);
    }
  }

  @Override
  public Step failed(IOException e) throws IOException {
    if (stage == Stage.SUBMIT) {
      submitted();
      throw e;
    }
    counted();
    throw wrap(e, -1);
  }

  @Override
  public Step waited() throws IOException {
    checkCanceled();
    stage = Stage.POLL;
    return get(token.statusUrl().orElseThrow());
  }

  @Override
  public IOException waitStopped(Exception cause) {
    if (runtime.lifecycle().isClosed()) {
      return closedFailure(); // the scheduler refused the wait because the client closed
    }
    return new AsyncOperationInterruptedException(token, attempts, cause);
  }

  @Override
  public IOException canceled() {
    return canceledFailure();
  }

  /** The submit ended: its attempts counted, its resume token made. */
  private void submitted() {
    Execution op = submitted;
    attempts += op.attempts();
    token = runtime.signed(ResumeToken.forSubmit(submit.method(), submit.url(), op.key(),
        op.keySent(), keyCreatedAt));
    info = infoOf(submit, token);
    submitted = null;
    keyCreatedAt = null;
  }

  /** The poll or fetch in flight ended: its attempts counted. */
  private void counted() {
    attempts += sent.attempts();
    sent = null;
  }

  /** The wait before the next poll. */
  private Step pollAfter(Duration delay, boolean fromRetryAfter) throws IOException {
    beforePoll(delay, fromRetryAfter);
    stage = Stage.WAIT;
    return new Step.Wait(delay);
  }

  private static OperationInfo infoOf(Request submit, ResumeToken token) {
    return KeyDecision.info(token.idempotencyKey(), token.idempotencyKeySent(), token.method(),
        submit != null ? submit.url() : token.url());
  }

  /** Reads the {@code 202}: the status resource, the result's location; returns the first delay. */
  private Duration accept(Response r) throws IOException {
    String body;
    try (r) {
      body = r.peekBody(policy.maxStatusBodyBytes()).string();
      HttpUrl status = policy.statusLocator().locate(r, body);
      if (status == null) {
        throw new PollFailedException("202 Accepted without a status resource the locator finds",
            token, attempts, "no-status-resource", 202, null);
      }
      String location = r.header("Location");
      HttpUrl result = location == null ? null : r.request().url().resolve(location);
      if (result != null && result.equals(status)) {
        result = null;
      }
      // The submit's original URL, not r's: a redirect of the submit does not move the origin.
      checkOrigin(status, token.url());
      if (result != null) {
        checkOrigin(result, token.url());
      }
      token = withCancelUrl(token.accepted(status, result), r, body);
      runtime.listeners().send("asyncOperationAccepted",
          l -> l.asyncOperationAccepted(info, token));
      return delayAfter(r, 1);
    }
  }

  /** Reads one poll: what comes next. Closes {@code poll} unless it is the result. */
  private Next afterPoll(Response poll) throws IOException {
    boolean keep = false;
    try {
      checkCanceled();
      String body = statusBody(poll);
      PollStatus status = policy.statusContract().classify(poll, body);
      int n = polls;
      if (status == null) {
        boolean ok = poll.isSuccessful();
        throw new PollFailedException(ok ? "the status contract cannot read poll " + n
            : "poll " + n + " answered " + poll.code(), token, attempts,
            ok ? "unrecognized-status" : "poll-status-" + poll.code(), poll.code(), null);
      }
      token = withCancelUrl(token, poll, body);
      runtime.listeners().send("pollCompleted", l -> l.pollCompleted(info, n, status));
      switch (status.state()) {
        case RUNNING: {
          Duration delay = delayAfter(poll, n + 1);
          return new Next(delay, retryAfterOf(poll, delay), null, null);
        }
        case SUCCEEDED: {
          HttpUrl location = status.resultLocation().orElse(token.resultUrl().orElse(null));
          if (policy.fetchResult() && location != null) {
            checkOrigin(location, token.url());
            return new Next(null, false, location, null);
          }
          keep = true;
          return new Next(null, false, null, poll);
        }
        default:
          throw new AsyncOperationFailedException(token, attempts, status.state(), poll.code(),
              status.details());
      }
    } finally {
      if (!keep) {
        poll.close();
      }
    }
  }

  /**
   * The status body of a poll. The deadline bounds reading it too: a read cut short by it is the
   * wait's deadline.
   */
  private String statusBody(Response poll) throws IOException {
    try {
      return poll.peekBody(policy.maxStatusBodyBytes()).string();
    } catch (IOException e) {
      if (run.remainingNanos() < MIN_ATTEMPT_NANOS) {
        throw new AsyncOperationDeadlineExceededException("deadline passed while reading a poll",
            token, attempts, e);
      }
      throw e;
    }
  }

  /**
   * {@code t} with the cancel URL this answer gives, if any. Its origin is checked when it is used
   * ({@link io.github.resilienthttp.ResilientHttpClient#cancelOnServer}), not here: a cancel link
   * elsewhere must not fail the
   * wait.
   */
  private ResumeToken withCancelUrl(ResumeToken t, Response r, String body) {
    HttpUrl cancel = policy.cancelLocator().locate(r, body);
    return cancel == null || cancel.equals(t.cancelUrl().orElse(null)) ? t : t.withCancelUrl(cancel);
  }

  /** The wait before poll {@code poll}: the interval with jitter, or the server's longer Retry-After. */
  private Duration delayAfter(Response r, int poll) {
    Duration base = baseInterval(policy, poll);
    long jitterNanos = (long) (base.toNanos() * policy.jitter() * runtime.random().nextDouble());
    Duration picked = base.plusNanos(jitterNanos);
    Duration server = RetryAfter.parse(r.header("Retry-After"), time.now()).orElse(null);
    return server != null && server.compareTo(picked) > 0 ? server : picked;
  }

  private boolean retryAfterOf(Response r, Duration delay) {
    Duration server = RetryAfter.parse(r.header("Retry-After"), time.now()).orElse(null);
    return server != null && server.equals(delay);
  }

  private void beforePoll(Duration delay, boolean fromRetryAfter) throws IOException {
    checkCanceled();
    checkDeadline(delay);
    int n = ++polls;
    runtime.listeners().send("pollScheduled",
        l -> l.pollScheduled(info, n, delay, fromRetryAfter));
  }

  /**
   * The poll interval before poll {@code poll} (from 1), before jitter: the minimum, doubled per
   * poll, up to the maximum.
   *
   * @param policy the wait's policy
   * @param poll the poll's number, from 1
   * @return the interval
   */
  public static Duration baseInterval(AsyncOperationPolicy policy, int poll) {
    Duration d = policy.minPollInterval();
    Duration max = policy.maxPollInterval();
    for (int i = 1; i < poll && d.compareTo(max) < 0; i++) {
      d = d.multipliedBy(2);
    }
    return d.compareTo(max) > 0 ? max : d;
  }

  /** Whether {@code url} is on the origin (scheme, host, port) of {@code submit}. */
  public static boolean sameOrigin(HttpUrl url, HttpUrl submit) {
    return OriginGuard.sameOrigin(url, submit);
  }

  private FollowUpCalls followUpsOf(HttpUrl origin, Request submit) {
    return FollowUpCalls.of(origin, policy.allowOtherOrigins(), submit, policy.carryHeaders(),
        policy.followUpHeaders());
  }

  /** Refuses a status or result URL on another origin than the submit's, unless allowed. */
  private void checkOrigin(HttpUrl url, HttpUrl submit) throws IOException {
    if (policy.allowOtherOrigins()) {
      return;
    }
    if (!sameOrigin(url, submit)) {
      throw new PollFailedException("the server points the wait at another origin ("
          + url.scheme() + "://" + url.host() + ":" + url.port() + "); allowOtherOrigins(true) to"
          + " follow it", token, attempts, "other-origin", -1, null);
    }
  }

  /** Fails now, rather than sleeping into the deadline, when the next poll would start after it. */
  private void checkDeadline(Duration delay) throws IOException {
    if (run.remainingNanos() - delay.toNanos() < MIN_ATTEMPT_NANOS) {
      throw new AsyncOperationDeadlineExceededException(delay.isZero()
          ? "deadline passed while waiting for the asynchronous operation"
          : "the next poll (in " + delay + ") could only start after the deadline", token,
          attempts, null);
    }
  }

  private void checkCanceled() throws IOException {
    if (runtime.lifecycle().isClosed()) {
      throw closedFailure(); // closeNow() cancels the run too: the close is the reason
    }
    if (run.isRunCanceled()) {
      throw canceledFailure();
    }
  }

  /** The failure of a wait that the client's close stopped: resumable with its token. */
  private PollFailedException closedFailure() {
    return new PollFailedException("client closed: the wait stopped (the server's job did not;"
        + " resume with the token on another client)", token, attempts, ClientLifecycle.REASON,
        -1, null);
  }

  private PollFailedException canceledFailure() {
    return new PollFailedException("wait canceled (the server's job is not: cancelOnServer(token)"
        + " when the server gave a cancel URL)", token, attempts, "canceled", -1, null);
  }

  /** One GET operation for a poll or the result fetch, with the time left as its deadline. */
  private Step get(HttpUrl url) throws IOException {
    checkCanceled(); // nor a poll or the result fetch of a closed client
    long remaining = run.remainingNanos();
    if (remaining < MIN_ATTEMPT_NANOS) {
      checkDeadline(Duration.ZERO);
    }
    Request get = followUps.request(new Request.Builder().url(url).get());
    sent = runtime.newOperation(get, AttemptKind.POLL)
        .idempotencyKey(token.idempotencyKey())
        .sendIdempotencyKey(false)
        .deadline(Duration.ofNanos(Math.max(MIN_ATTEMPT_NANOS, remaining)));
    return new Step.Send(sent);
  }

  /** A poll's failure as the wait's: typed, with the resume token. */
  private IOException wrap(IOException e, int status) {
    if (e instanceof ResumableFailure) {
      return e;
    } else if (e instanceof DeadlineExceededException) {
      return new AsyncOperationDeadlineExceededException("deadline passed during a poll", token,
          attempts, e);
    } else if (e instanceof OperationInterruptedException) {
      return new AsyncOperationInterruptedException(token, attempts, e);
    }
    String reason = e instanceof OperationFailure f ? f.reason() : "poll-failed";
    if (OriginGuard.refused(e)) {
      reason = OriginGuard.REASON; // whatever a custom classifier called it
    }
    if (runtime.lifecycle().isClosed()) {
      reason = ClientLifecycle.REASON;
    } else if (run.isRunCanceled()) {
      reason = "canceled";
    }
    return new PollFailedException("poll failed: " + e.getMessage(), token, attempts, reason,
        e instanceof OutcomeUnknownException u ? u.statusCode() : status, e);
  }

  /**
   * Checks {@code token}'s key against the key retention: warns (listener event, log) or refuses.
   *
   * @throws KeyRetentionExceededException when refused
   */
  public static void checkKeyAge(ClientRuntime runtime, AsyncOperationPolicy policy, ResumeToken token)
      throws KeyRetentionExceededException {
    Duration retention = policy.keyRetention().orElse(null);
    if (retention == null) {
      return;
    }
    Duration age = Duration.between(token.keyCreatedAt(), runtime.timeSource().now());
    if (age.compareTo(retention) <= 0) {
      return;
    }
    boolean refuse = policy.lateResume() == AsyncOperationPolicy.LateResume.REFUSE;
    OperationInfo info = infoOf(null, token);
    runtime.listeners().send("keyRetentionExceeded",
        l -> l.keyRetentionExceeded(info, token, age, refuse));
    log.warn("resuming {}: its key is {} old, past the key retention of {}; the server may have"
        + " forgotten it{}", token, age, retention, refuse ? " (refused)" : "");
    if (refuse) {
      throw new KeyRetentionExceededException(token, age, retention);
    }
  }
}

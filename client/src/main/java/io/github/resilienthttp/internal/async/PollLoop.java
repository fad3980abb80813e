package io.github.resilienthttp.internal.async;

import static io.github.resilienthttp.internal.util.Floors.MIN_ATTEMPT_NANOS;
import static io.github.resilienthttp.internal.util.Floors.unwrap;

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
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.KeyDecision;
import io.github.resilienthttp.internal.engine.OperationFuture;
import io.github.resilienthttp.internal.okhttp.OriginGuard;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for one asynchronous operation: submits it (or resumes from a token), then polls its status
 * resource until the {@link io.github.resilienthttp.StatusContract} reads a terminal state, under
 * one deadline, and fetches the result. Each poll and the result fetch are GET {@link Operation}s
 * of their own (classified, retried on transient failure, bounded by the budget, the breaker and
 * the bulkhead), whose deadline is the time left and whose first attempt is an
 * {@link AttemptKind#POLL}; they carry the submit's key for correlation in listeners but never send
 * it. The submit is never re-sent once accepted.
 *
 * <p>One waiter per wait; {@link #cancel()} is thread-safe. Not API.
 */
public final class PollLoop {
  private static final Logger log = LoggerFactory.getLogger(PollLoop.class);

  private final ClientRuntime runtime;
  private final AsyncOperationPolicy policy;
  private final TimeSource time;
  private final CompletableFuture<Void> cancelSignal = new CompletableFuture<>();
  private long deadlineNanos;
  private OperationInfo info;
  private ResumeToken token;
  /** How polls and the result fetch are built: the origin rule and the carried headers. */
  private FollowUpCalls followUps;
  private int polls;
  private volatile int attempts;
  private volatile boolean canceled;
  private volatile Operation current;
  private volatile ScheduledFuture<?> scheduled;

  /**
   * A wait of {@code runtime}'s client.
   *
   * @param runtime the client's runtime
   * @param policy how to wait
   */
  public PollLoop(ClientRuntime runtime, AsyncOperationPolicy policy) {
    this.runtime = runtime;
    this.policy = policy;
    this.time = runtime.timeSource();
  }

  /** What comes after a poll: wait and poll again, fetch the result, or return a response. */
  private record Next(Duration delay, boolean fromRetryAfter, HttpUrl fetch, Response done) {}

  // ---------------------------------------------------------------- blocking

  /**
   * Submits {@code submit} and, on {@code 202}, waits for it, blocking.
   *
   * @param submit the operation, not yet run
   * @param submitDeadline its own deadline, or {@code null} for the retry policy's
   * @param keyCreatedAt when its key was made, or {@code null} for now
   * @return the final result
   * @throws IOException as {@link Operation#awaitCompletion(AsyncOperationPolicy)}
   */
  public Response submitAndWait(Operation submit, Duration submitDeadline, Instant keyCreatedAt)
      throws IOException {
    startClock(submitDeadline);
    submit.deadline(Duration.ofNanos(Math.max(MIN_ATTEMPT_NANOS, remainingNanos())));
    Instant created = keyCreatedAt != null ? keyCreatedAt : time.now();
    followUps = followUpsOf(submit.request().url(), submit.request());
    current = submit;
    Response r = submit.execute();
    attempts += submit.attempts();
    token = runtime.signed(ResumeToken.forSubmit(submit.request().method(), submit.request().url(),
        submit.idempotencyKey(), submit.idempotencyKeySent(), created));
    info = infoOf(submit.request(), token);
    if (r.code() != 202) {
      return r; // finished at once (or failed for good): nothing to wait for
    }
    Duration first = accept(r);
    return pollLoop(first, retryAfterOf(r, first));
  }

  /**
   * Resumes the wait of {@code resumed}, blocking.
   *
   * @param resumed the token of an accepted operation
   * @return the final result
   * @throws IOException as {@link Operation#awaitCompletion(AsyncOperationPolicy)}
   */
  public Response resumeWait(ResumeToken resumed) throws IOException {
    startClock(null);
    token = resumed;
    followUps = followUpsOf(resumed.url(), null);
    info = infoOf(null, resumed);
    checkOrigin(resumed.statusUrl().orElseThrow(), resumed.url());
    runtime.listeners().send("asyncOperationAccepted", l -> l.asyncOperationAccepted(info, token));
    // A restarted process wants the status now: the first poll of a resume does not wait.
    return pollLoop(Duration.ZERO, false);
  }

  private Response pollLoop(Duration firstDelay, boolean fromRetryAfter) throws IOException {
    Duration delay = firstDelay;
    boolean serverDelay = fromRetryAfter;
    while (true) {
      beforePoll(delay, serverDelay);
      try {
        time.sleep(delay, cancelSignal);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AsyncOperationInterruptedException(token, attempts, e);
      }
      checkCanceled();
      Next next = afterPoll(get(token.statusUrl().orElseThrow()));
      if (next.done() != null) {
        return next.done();
      } else if (next.fetch() != null) {
        checkDeadline(Duration.ZERO);
        return get(next.fetch());
      }
      delay = next.delay();
      serverDelay = next.fromRetryAfter();
    }
  }

  /** One GET operation for a poll or the result fetch, with the time left as its deadline. */
  private Response get(HttpUrl url) throws IOException {
    Operation op = pollOperation(url);
    try {
      return op.execute();
    } catch (IOException e) {
      throw wrap(e, -1);
    } finally {
      attempts += op.attempts();
    }
  }

  // ---------------------------------------------------------------- non-blocking

  /**
   * The future of an async wait: completing it from outside (cancel, {@code orTimeout},
   * {@code complete}, ...) stops polling; the wait completes it with the {@code ...FromOperation}
   * methods.
   */
  private OperationFuture newResult() {
    return new OperationFuture(this::cancel);
  }

  /**
   * Submits {@code submit} and, on {@code 202}, waits for it without holding a thread.
   *
   * @param submit the operation, not yet run
   * @param submitDeadline its own deadline, or {@code null} for the retry policy's
   * @param keyCreatedAt when its key was made, or {@code null} for now
   * @return the future of the final result; completing it from outside stops the wait
   */
  public CompletableFuture<Response> submitAndWaitAsync(Operation submit, Duration submitDeadline,
      Instant keyCreatedAt) {
    OperationFuture result = newResult();
    startClock(submitDeadline);
    submit.deadline(Duration.ofNanos(Math.max(MIN_ATTEMPT_NANOS, remainingNanos())));
    Instant created = keyCreatedAt != null ? keyCreatedAt : time.now();
    followUps = followUpsOf(submit.request().url(), submit.request());
    current = submit;
    submit.executeAsync().whenComplete((r, e) -> {
      attempts += submit.attempts();
      token = runtime.signed(ResumeToken.forSubmit(submit.request().method(), submit.request().url(),
          submit.idempotencyKey(), submit.idempotencyKeySent(), created));
      info = infoOf(submit.request(), token);
      if (e != null) {
        result.failFromOperation(unwrap(e));
        return;
      }
      if (r.code() != 202) {
        complete(result, r);
        return;
      }
      try {
        Duration first = accept(r);
        schedulePoll(result, first, retryAfterOf(r, first));
      } catch (Throwable t) {
        result.failFromOperation(t);
      }
    });
    return result;
  }

  /**
   * Resumes the wait of {@code resumed} without holding a thread.
   *
   * @param resumed the token of an accepted operation
   * @return the future of the final result; completing it from outside stops the wait
   */
  public CompletableFuture<Response> resumeWaitAsync(ResumeToken resumed) {
    OperationFuture result = newResult();
    startClock(null);
    token = resumed;
    followUps = followUpsOf(resumed.url(), null);
    info = infoOf(null, resumed);
    runtime.listeners().send("asyncOperationAccepted", l -> l.asyncOperationAccepted(info, token));
    try {
      checkOrigin(resumed.statusUrl().orElseThrow(), resumed.url());
      schedulePoll(result, Duration.ZERO, false);
    } catch (Throwable t) {
      result.failFromOperation(t);
    }
    return result;
  }

  private void schedulePoll(OperationFuture result, Duration delay,
      boolean fromRetryAfter) throws IOException {
    beforePoll(delay, fromRetryAfter);
    scheduled = runtime.scheduler().schedule(() -> startPoll(result), delay.toNanos(),
        TimeUnit.NANOSECONDS);
    if (canceled) {
      scheduled.cancel(false);
    }
  }

  private void startPoll(OperationFuture result) {
    try {
      checkCanceled();
      getAsync(token.statusUrl().orElseThrow()).whenComplete((pr, e) -> {
        if (e != null) {
          result.failFromOperation(e);
          return;
        }
        try {
          Next next = afterPoll(pr);
          if (next.done() != null) {
            complete(result, next.done());
          } else if (next.fetch() != null) {
            checkDeadline(Duration.ZERO);
            getAsync(next.fetch()).whenComplete((fr, fe) -> {
              if (fe != null) {
                result.failFromOperation(fe);
              } else {
                complete(result, fr);
              }
            });
          } else {
            schedulePoll(result, next.delay(), next.fromRetryAfter());
          }
        } catch (Throwable t) {
          result.failFromOperation(t);
        }
      });
    } catch (Throwable t) {
      result.failFromOperation(t);
    }
  }

  private CompletableFuture<Response> getAsync(HttpUrl url) throws IOException {
    Operation op = pollOperation(url);
    return op.executeAsync().handle((r, e) -> {
      attempts += op.attempts();
      if (e != null) {
        Throwable cause = unwrap(e);
        throw new CompletionException(cause instanceof IOException io ? wrap(io, -1) : cause);
      }
      return r;
    }).exceptionallyCompose(e -> CompletableFuture.failedFuture(unwrap(e)));
  }

  /** Completes {@code result}, closing {@code r} when the wait was cancelled meanwhile. */
  private static void complete(OperationFuture result, Response r) {
    if (!result.completeFromOperation(r)) {
      r.close();
    }
  }

  // ---------------------------------------------------------------- shared steps

  /** Stops polling: no poll starts after this, and the one in flight is cancelled. */
  public void cancel() {
    if (canceled) {
      return; // once: the submit's own cancel() calls back here
    }
    canceled = true;
    cancelSignal.complete(null);
    Operation op = current;
    if (op != null) {
      op.cancel();
    }
    Future<?> f = scheduled;
    if (f != null) {
      f.cancel(false);
    }
  }

  private void startClock(Duration operationDeadline) {
    Duration d = policy.deadline().orElse(
        operationDeadline != null ? operationDeadline : runtime.retryPolicy().deadline());
    deadlineNanos = time.nanoTime() + d.toNanos();
  }

  private long remainingNanos() {
    return deadlineNanos - time.nanoTime();
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
      if (remainingNanos() < MIN_ATTEMPT_NANOS) {
        throw new AsyncOperationDeadlineExceededException("deadline passed while reading a poll",
            token, attempts, e);
      }
      throw e;
    }
  }

  /**
   * {@code t} with the cancel URL this answer gives, if any. Its origin is checked when it is used
   * ({@link io.github.resilienthttp.ResilientHttpClient#cancelOnServer}), not here: a cancel link
   * elsewhere must not fail the wait.
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
    if (remainingNanos() - delay.toNanos() < MIN_ATTEMPT_NANOS) {
      throw new AsyncOperationDeadlineExceededException(delay.isZero()
          ? "deadline passed while waiting for the asynchronous operation"
          : "the next poll (in " + delay + ") could only start after the deadline", token,
          attempts, null);
    }
  }

  private void checkCanceled() throws IOException {
    if (canceled) {
      throw new PollFailedException("wait canceled (the server's job is not: cancelOnServer(token)"
          + " when the server gave a cancel URL)", token, attempts,
          "canceled", -1, null);
    }
  }

  private Operation pollOperation(HttpUrl url) throws IOException {
    long remaining = remainingNanos();
    if (remaining < MIN_ATTEMPT_NANOS) {
      checkDeadline(Duration.ZERO);
    }
    Request get = followUps.request(new Request.Builder().url(url).get());
    Operation op = runtime.newOperation(get, AttemptKind.POLL)
        .idempotencyKey(token.idempotencyKey())
        .sendIdempotencyKey(false)
        .deadline(Duration.ofNanos(Math.max(MIN_ATTEMPT_NANOS, remaining)));
    current = op;
    if (canceled) {
      op.cancel();
    }
    return op;
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
    if (canceled) {
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

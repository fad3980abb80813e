package io.github.resilienthttp.internal.async;

import io.github.resilienthttp.AsyncOperationPolicy;
import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.InvalidResumeTokenException;
import io.github.resilienthttp.KeyRetentionExceededException;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.PollFailedException;
import io.github.resilienthttp.ResumeToken;
import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.KeyDecision;
import io.github.resilienthttp.internal.engine.Run;
import java.io.IOException;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Resuming an intent from its {@link ResumeToken}: the wait of an accepted operation, the
 * re-submission of one that was not accepted (with the same key, only when that is safe), and the
 * server-side cancel of an accepted one. The rules behind {@code ResilientHttpClient.resume},
 * {@code resumeAsync} and {@code cancelOnServer}. Not API.
 */
public final class Resumption {
  /** The 202 wait of an operation, started as the re-submission of a token's intent. */
  @FunctionalInterface
  public interface Waits {
    /**
     * The run of {@code op} with the 202 wait ({@code Operation.awaitCompletion}), started.
     *
     * @param op the re-submission, not yet run
     * @param policy how to wait
     * @param keyCreatedAt when the key was made (the token's)
     * @return the run, to execute blocking or not
     */
    Run of(Operation op, AsyncOperationPolicy policy, Instant keyCreatedAt);
  }

  private final ClientRuntime runtime;
  private final Waits waits;
  private final UnaryOperator<ResumeToken> verifier;

  /**
   * The resumption of {@code runtime}'s client.
   *
   * @param runtime the client's runtime
   * @param waits the wait of a re-submitted operation
   * @param verifier the client's check of a token's signature (throws
   *     {@link InvalidResumeTokenException}), applied before any token is acted on
   */
  public Resumption(ClientRuntime runtime, Waits waits, UnaryOperator<ResumeToken> verifier) {
    this.runtime = runtime;
    this.waits = waits;
    this.verifier = verifier;
  }

  /**
   * See {@code ResilientHttpClient.resume(token, policy)} and {@code resume(token, request,
   * policy)}: the run of the wait (or of the re-submission and its wait), started.
   *
   * @param token the token
   * @param request the token's submit, for a token that was not accepted; {@code null} for an
   *     accepted one
   * @param policy how to wait
   * @return the run, to execute blocking or not
   * @throws IllegalArgumentException when the token was not accepted and no request is given, or
   *     re-submitting it is not safe, or the request is not the token's
   * @throws InvalidResumeTokenException when the client may not act on the token
   * @throws KeyRetentionExceededException when the key is past the retention and the policy
   *     refuses late resumes
   */
  public Run resumption(ResumeToken token, Request request, AsyncOperationPolicy policy)
      throws KeyRetentionExceededException {
    Objects.requireNonNull(token, "token");
    if (request == null || token.isAccepted()) {
      checkAccepted(token);
      token = verify(token);
      PollLoop.checkKeyAge(runtime, Objects.requireNonNull(policy, "policy"), token);
      return PollLoop.resume(runtime, policy, token);
    }
    token = verify(token);
    Operation op = resubmission(token, request);
    PollLoop.checkKeyAge(runtime, Objects.requireNonNull(policy, "policy"), token);
    return waits.of(op, policy, token.keyCreatedAt());
  }

  /**
   * {@link #resumption} without holding a thread: its refusals of the token complete the future.
   *
   * @return the future of the final result
   */
  public CompletableFuture<Response> resumeAsync(ResumeToken token, Request request,
      AsyncOperationPolicy policy) {
    if (request == null || Objects.requireNonNull(token, "token").isAccepted()) {
      checkAccepted(token); // a call that cannot be right throws, as the blocking form does
    }
    Run run;
    try {
      run = resumption(token, request, policy);
    } catch (KeyRetentionExceededException | InvalidResumeTokenException e) {
      return CompletableFuture.failedFuture(e);
    }
    return run.executeAsync();
  }

  /**
   * See {@code ResilientHttpClient.cancelOnServer(token, submit, policy)}: the cancel carries the
   * submit's headers that the policy names, to the submit's origin only ({@code submit} may be
   * {@code null}).
   */
  public Response cancelOnServer(ResumeToken token, Request submit, AsyncOperationPolicy policy)
      throws IOException {
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(policy, "policy");
    if (submit != null && (!submit.method().equals(token.method())
        || !submit.url().equals(token.url()))) {
      throw new IllegalArgumentException("the request is not the token's (" + token.method() + " "
          + token.url().redact() + ")");
    }
    ResumeToken verified = verify(token);
    HttpUrl cancel = verified.cancelUrl().orElseThrow(() -> new IllegalStateException(
        "the server gave no cancel URL for " + token + " (no Link rel=\"cancel\" or cancelUrl field"
            + " the cancelLocator finds): nothing was sent. Cancelling the wait only stops polling;"
            + " the server's job goes on"));
    if (!policy.allowOtherOrigins() && !PollLoop.sameOrigin(cancel, token.url())) {
      throw new PollFailedException("the server's cancel URL is on another origin ("
          + cancel.scheme() + "://" + cancel.host() + ":" + cancel.port() + "); nothing was sent;"
          + " allowOtherOrigins(true) to follow it", token, 0, "other-origin", -1, null);
    }
    Request request = FollowUpCalls.of(token.url(), policy.allowOtherOrigins(), submit,
        policy.carryHeaders(), policy.followUpHeaders())
        .request(new Request.Builder().url(cancel)
            .method(policy.cancelMethod().name(), policy.cancelMethod()
                == AsyncOperationPolicy.CancelMethod.POST ? RequestBody.create(new byte[0]) : null));
    Operation op = runtime.newOperation(request, AttemptKind.FIRST)
        .idempotencyKey(verified.idempotencyKey()).sendIdempotencyKey(false);
    policy.deadline().ifPresent(op::deadline);
    return op.execute();
  }

  /** The token if this client may act on it (see {@code ResilientHttpClient.verifyResumeToken}). */
  private ResumeToken verify(ResumeToken token) {
    return verifier.apply(Objects.requireNonNull(token, "token"));
  }

  private static void checkAccepted(ResumeToken token) {
    if (!Objects.requireNonNull(token, "token").isAccepted()) {
      throw new IllegalArgumentException("the token's operation was not accepted (no status"
          + " resource): re-submit it with resume(token, request, policy)");
    }
  }

  /** The token's submit again, with its key, sent or not as before; refused when not safe. */
  private Operation resubmission(ResumeToken token, Request request) {
    Objects.requireNonNull(request, "request");
    if (!request.method().equals(token.method()) || !request.url().equals(token.url())) {
      throw new IllegalArgumentException("the request is not the token's (" + token.method() + " "
          + token.url().redact() + ")");
    }
    if (!KeyDecision.idempotent(token.idempotencyKeySent(), token.method())) {
      throw new IllegalArgumentException("re-submitting is not safe: no idempotency key was sent"
          + " and " + token.method() + " is not idempotent");
    }
    Operation op = runtime.newOperation(request, AttemptKind.FIRST)
        .idempotencyKey(token.idempotencyKey());
    if (!token.idempotencyKeySent()) {
      op.sendIdempotencyKey(false);
    }
    return op;
  }
}

package io.github.resilienthttp;

import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.outbox.DrainSchedule;
import io.github.resilienthttp.internal.engine.KeyDecision;
import io.github.resilienthttp.internal.outbox.OutboxExit;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import okhttp3.Request;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drains an {@link Outbox}: claims due intents with a lease ({@link Outbox#claim}) and resumes each
 * with its own key ({@link ResilientHttpClient#resume(ResumeToken, Request, AsyncOperationPolicy)}: an
 * accepted one is waited for, another re-submitted with the same key), bounded (at most
 * {@link Builder#batchSize} per {@link #drainOnce()}, at most {@link Builder#maxTries} tries per
 * intent, {@link Builder#retryDelay} between tries) and observable (a
 * {@link OperationListener#parkedOperationTried} event per try and a {@link Report} per drain). Call
 * {@link #drainOnce()} from your own scheduler, or {@link #start(ScheduledExecutorService, Duration)}
 * to have one drain on a period. Blocking; one drain at a time per resumer (synchronized); any number
 * of resumers (threads or processes) may drain one outbox whose claims hold leases.
 *
 * <p><b>Order.</b> An intent leaves the outbox only after its result was handed over: the resumer
 * renews its lease (refused: another resumer took the intent over, this one stops without calling the
 * handler, outcome {@code lost}), calls the result handler, and only then
 * {@linkplain Outbox#complete completes} the claim. A handler that throws gets the intent
 * rescheduled (the server keeps the key's stored response, so the next try hands the same result
 * over again); a settled intent is never abandoned because its handler failed. A crash between the
 * handler and the completion leaves the intent parked: the next holder resumes it (the key makes the
 * server answer with the stored result) and calls the handler again, so the handler must be
 * idempotent by key, or complete the claim itself in the transaction of its own record (the JDBC
 * outbox's {@code complete(Connection, OutboxClaim)}), which makes the handover exactly once.
 *
 * <p><b>Leases.</b> One drain claims its whole batch for {@link Builder#lease}; an intent reached
 * when less than half the lease is left is renewed first (refused: {@code lost}, not resumed). The
 * lease must be longer than one intent's resume plus its handler; when a lease runs out anyway,
 * another resumer may resume the same intent at the same time (the key keeps the server safe) and
 * only the current holder's handler runs.
 *
 * <p>The token holds no body: {@link Builder#requestFor} rebuilds the original request from your
 * own records (the business row the intent belongs to), for intents that must be re-submitted.
 */
public final class OutboxResumer {
  private static final Logger log = LoggerFactory.getLogger(OutboxResumer.class);

  /**
   * What one drain did.
   *
   * @param resumed intents now done (removed)
   * @param failed intents that ended with a definite failure (removed)
   * @param rescheduled intents still open (or whose result handler failed), due again later
   * @param abandoned intents out of tries, or not safe to re-send (removed; handle them by hand)
   * @param lost intents another resumer took over before this one settled them (left to it)
   */
  public record Report(int resumed, int failed, int rescheduled, int abandoned, int lost) {
    /**
     * A report with nothing lost ({@code lost} 0).
     *
     * @param resumed intents now done
     * @param failed intents that ended with a definite failure
     * @param rescheduled intents still open
     * @param abandoned intents out of tries, or not safe to re-send
     */
    public Report(int resumed, int failed, int rescheduled, int abandoned) {
      this(resumed, failed, rescheduled, abandoned, 0);
    }

    /** {@return intents tried} */
    public int tried() {
      return resumed + failed + rescheduled + abandoned + lost;
    }
  }

  /**
   * Receives a resumed intent's final response with the claim it was resumed under. Called on the
   * draining thread, before the response is closed and before the claim is completed.
   */
  @FunctionalInterface
  public interface ResultHandler {
    /**
     * Hands one result over (completes the business record).
     *
     * @param claim the claim; pass it to a transactional completion to settle both at once
     * @param response the final response, closed after this returns
     * @throws Exception anything: the intent is rescheduled and the failure logged
     */
    void accept(OutboxClaim claim, Response response) throws Exception;
  }

  /** A periodic drain from {@link #start}: stop it to end the schedule. Thread-safe. */
  public interface Schedule extends AutoCloseable {
    /**
     * Stops scheduling drains and asks a running drain to stop after its current intent (the rest of
     * its batch stays claimed until the lease runs out), then waits for it.
     *
     * @param timeout how long to wait for a running drain, at least 0
     * @return whether no drain is running any more (false: still running after the timeout)
     * @throws InterruptedException when interrupted while waiting
     */
    boolean stop(Duration timeout) throws InterruptedException;

    /** {@return whether {@link #stop} was called} */
    boolean isStopped();

    /** Stops and waits up to 30 s; restores the interrupt flag when interrupted. */
    @Override
    void close();
  }

  private final ResilientHttpClient client;
  private final ClientRuntime runtime;
  private final Outbox outbox;
  private final Function<ResumeToken, Request> requestFor;
  private final AsyncOperationPolicy policy;
  private final int batchSize;
  private final int maxTries;
  private final Duration retryDelay;
  private final Duration lease;
  private final ResultHandler onResult;

  private OutboxResumer(Builder b) {
    this.client = b.client;
    this.runtime = b.client.runtime();
    this.outbox = b.outbox;
    this.requestFor = b.requestFor;
    this.policy = b.policy;
    this.batchSize = b.batchSize;
    this.maxTries = b.maxTries;
    this.retryDelay = b.retryDelay;
    this.lease = b.lease;
    this.onResult = b.onResult;
  }

  /**
   * A builder.
   *
   * @param client the client to resume with
   * @param outbox the outbox to drain
   * @return a builder
   */
  public static Builder builder(ResilientHttpClient client, Outbox outbox) {
    return new Builder(client, outbox);
  }

  /**
   * Claims and tries every due intent, up to the batch size, once. Stops early (the rest of the batch
   * stays claimed until its lease runs out) when the thread is interrupted.
   *
   * @return what it did
   * @throws RuntimeException what the outbox throws (e.g. its database is down)
   */
  public Report drainOnce() {
    return drain(() -> true);
  }

  /**
   * Drains every {@code period} (fixed delay: the next drain starts {@code period} after the last one
   * ended) on {@code executor}, starting now, until {@link Schedule#stop}. A drain that throws (the
   * outbox's database is down) is logged and the schedule goes on; so is a stop requested while a
   * drain runs. The executor stays yours: shut it down after stopping.
   *
   * @param executor where drains run
   * @param period between the end of one drain and the start of the next, 1 ms to 24 h
   * @return the schedule, to stop
   * @throws IllegalArgumentException when {@code period} is out of range
   */
  public Schedule start(ScheduledExecutorService executor, Duration period) {
    return DrainSchedule.start(executor, period, "outbox resumer on " + outbox, this::drain);
  }

  private synchronized Report drain(BooleanSupplier keepGoing) {
    int resumed = 0;
    int failed = 0;
    int rescheduled = 0;
    int abandoned = 0;
    int lost = 0;
    List<OutboxClaim> claims = outbox.claim(runtime.timeSource().now(), batchSize, lease);
    for (OutboxClaim claim : claims) {
      if (!keepGoing.getAsBoolean() || Thread.currentThread().isInterrupted()) {
        break;
      }
      OutboxEntry entry = claim.entry();
      String outcome = tryOne(claim);
      switch (outcome) {
        case "resumed" -> resumed++;
        case "failed" -> failed++;
        case "rescheduled" -> rescheduled++;
        case "lost" -> lost++;
        default -> abandoned++;
      }
      ResumeToken t = entry.token();
      OperationInfo info = KeyDecision.info(t);
      runtime.listeners().send("parkedOperationTried",
          l -> l.parkedOperationTried(info, entry, outcome));
    }
    return new Report(resumed, failed, rescheduled, abandoned, lost);
  }

  private String tryOne(OutboxClaim claim) {
    OutboxEntry entry = claim.entry();
    ResumeToken token = entry.token();
    // Late in a slow batch: make sure the intent is still this resumer's before resuming it again.
    Instant now = runtime.timeSource().now();
    if (now.plus(lease.dividedBy(2)).isAfter(claim.leaseExpiresAt())
        && !outbox.renew(claim, now, lease)) {
      return "lost";
    }
    Request request = null;
    if (!token.isAccepted()) {
      if (!token.idempotencyKeySent() && !AttemptOutcome.isIdempotentMethod(token.method())) {
        return settle(claim, "abandoned"); // no key: a re-send could do it twice
      }
      request = requestFor.apply(token);
      if (request == null) {
        return settle(claim, "abandoned");
      }
    }
    Response r;
    try {
      r = request == null ? client.resume(token, policy) : client.resume(token, request, policy);
    } catch (KeyRetentionExceededException | AsyncOperationFailedException e) {
      return settle(claim, e instanceof KeyRetentionExceededException ? "abandoned" : "failed");
    } catch (InvalidResumeTokenException e) {
      // A token this client will not act on (unsigned, another key): nothing was sent. Kept, tries
      // unchanged, so that a key configured later (or the migration opt-in) can still resume it.
      log.error("parked {} refused ({}): {}", token, e.reason(), e.getMessage());
      OutboxEntry held = claim.entry();
      return outbox.reschedule(claim, new OutboxEntry(token, held.reason(), held.parkedAt(),
          held.tries(), dueAgain())) ? "rescheduled" : "lost";
    } catch (IOException | RuntimeException e) {
      if (e instanceof IOException io && !OutboxExit.indefinite(io)) {
        return settle(claim, "failed");
      }
      // A wait that stopped again may have learnt the status resource: keep the newer token.
      return reschedule(claim, ResumableFailure.of(e).orElse(token));
    }
    // Outside the catch above: an outbox failure from here on is the outbox's, thrown to the caller.
    try (r) {
      int code = r.code();
      if (code == 408 || code == 429 || code >= 500) {
        return reschedule(claim, token); // the last answer of a retried resume: still open
      }
      return handOver(claim, r);
    }
  }

  /** The result is definite: hand it over while the claim is current, then complete the claim. */
  private String handOver(OutboxClaim claim, Response r) {
    if (!outbox.renew(claim, runtime.timeSource().now(), lease)) {
      return "lost";
    }
    try {
      onResult.accept(claim, r);
    } catch (Exception handlerFailure) {
      log.error("the result handler failed for {} (HTTP {}); rescheduled", claim.idempotencyKey(),
          r.code(), handlerFailure);
      if (handlerFailure instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      return outbox.reschedule(claim, claim.entry().triedAgainAt(dueAgain())) ? "rescheduled"
          : "lost";
    }
    // False when the handler completed the claim in its own transaction: the intent is settled.
    outbox.complete(claim);
    return r.isSuccessful() ? "resumed" : "failed";
  }

  private String settle(OutboxClaim claim, String outcome) {
    return outbox.complete(claim) ? outcome : "lost";
  }

  private String reschedule(OutboxClaim claim, ResumeToken token) {
    OutboxEntry entry = claim.entry();
    if (entry.tries() + 1 >= maxTries) {
      return settle(claim, "abandoned");
    }
    OutboxEntry next = new OutboxEntry(token, entry.reason(), entry.parkedAt(), entry.tries() + 1,
        dueAgain());
    return outbox.reschedule(claim, next) ? "rescheduled" : "lost";
  }

  private Instant dueAgain() {
    return runtime.timeSource().now().plus(retryDelay);
  }

  /** Builds an {@link OutboxResumer}; validates at {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private final ResilientHttpClient client;
    private final Outbox outbox;
    private Function<ResumeToken, Request> requestFor = t -> null;
    private AsyncOperationPolicy policy = AsyncOperationPolicy.defaults();
    private int batchSize = 100;
    private int maxTries = 10;
    private Duration retryDelay = Duration.ofMinutes(1);
    private Duration lease = Duration.ofMinutes(5);
    private ResultHandler onResult = (c, r) -> { };

    private Builder(ResilientHttpClient client, Outbox outbox) {
      this.client = Objects.requireNonNull(client, "client");
      this.outbox = Objects.requireNonNull(outbox, "outbox");
    }

    /**
     * Rebuilds the original request (with its body) of an intent to re-submit; {@code null}
     * abandons it. Default: always {@code null} (only accepted intents are resumed).
     *
     * @param requestFor the request for a token
     * @return this builder
     */
    public Builder requestFor(Function<ResumeToken, Request> requestFor) {
      this.requestFor = Objects.requireNonNull(requestFor, "requestFor");
      return this;
    }

    /**
     * How to wait for accepted intents, and the key retention. Default
     * {@link AsyncOperationPolicy#defaults()}.
     *
     * @param policy the policy
     * @return this builder
     */
    public Builder policy(AsyncOperationPolicy policy) {
      this.policy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * At most this many intents per drain. Default 100.
     *
     * @param batchSize 1 to 10,000
     * @return this builder
     */
    public Builder batchSize(int batchSize) {
      this.batchSize = batchSize;
      return this;
    }

    /**
     * Tries per intent before it is abandoned. Default 10.
     *
     * @param maxTries 1 to 1,000
     * @return this builder
     */
    public Builder maxTries(int maxTries) {
      this.maxTries = maxTries;
      return this;
    }

    /**
     * The wait before an intent that is still open is tried again. Default 1 min.
     *
     * @param retryDelay 0 to 24 h
     * @return this builder
     */
    public Builder retryDelay(Duration retryDelay) {
      this.retryDelay = Objects.requireNonNull(retryDelay, "retryDelay");
      return this;
    }

    /**
     * Receives each resumed intent's final response (before it is closed), to complete the business
     * record; replaces {@link #onClaimedResult(ResultHandler)}. Called while this resumer's claim is current,
     * before the intent leaves the outbox; when it throws, the intent is rescheduled. Default:
     * nothing.
     *
     * @param onResult the handler
     * @return this builder
     */
    public Builder onResult(BiConsumer<OutboxEntry, Response> onResult) {
      Objects.requireNonNull(onResult, "onResult");
      this.onResult = (claim, r) -> onResult.accept(claim.entry(), r);
      return this;
    }

    /**
     * Receives each resumed intent's final response with its claim, to complete the business record
     * and the claim in one transaction (see the class comment); replaces
     * {@link #onResult(BiConsumer)}. Default: nothing.
     *
     * @param onResult the handler
     * @return this builder
     */
    public Builder onClaimedResult(ResultHandler onResult) {
      this.onResult = Objects.requireNonNull(onResult, "onResult");
      return this;
    }

    /**
     * How long a claim holds an intent before another resumer may take it over: longer than one
     * resume (its waits included) plus the result handler. Default 5 min.
     *
     * @param lease 1 ms to 24 h
     * @return this builder
     */
    public Builder lease(Duration lease) {
      this.lease = Objects.requireNonNull(lease, "lease");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the resumer
     * @throws IllegalArgumentException when a setting is out of range
     */
    public OutboxResumer build() {
      if (batchSize < 1 || batchSize > 10_000) {
        throw new IllegalArgumentException("batchSize must be 1 to 10,000");
      }
      if (maxTries < 1 || maxTries > 1_000) {
        throw new IllegalArgumentException("maxTries must be 1 to 1,000");
      }
      RetryPolicy.Builder.checkRange("retryDelay", retryDelay, Duration.ZERO);
      RetryPolicy.Builder.checkRange("lease", lease, Duration.ofMillis(1));
      return new OutboxResumer(this);
    }
  }
}

package io.github.resilienthttp;

import io.github.resilienthttp.internal.engine.ClientRuntime;
import io.github.resilienthttp.internal.engine.KeyDecision;
import io.github.resilienthttp.internal.outbox.OutboxExit;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Function;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Drains an {@link Outbox}: resumes each due intent with its own key
 * ({@link ResilientHttpClient#resume(ResumeToken, Request, AsyncOperationPolicy)}: an accepted one
 * is
 * waited for, another re-submitted with the same key), bounded (at most {@link Builder#batchSize}
 * per
 * {@link #drainOnce()}, at most {@link Builder#maxTries} tries per intent, {@link
 * Builder#retryDelay}
 * between tries) and observable (a {@link OperationListener#parkedOperationTried} event per try
 * and a
 * {@link Report} per drain). Call {@link #drainOnce()} from your own scheduler (a
 * {@code ScheduledExecutorService}, a cron job at start-up): the resumer owns no thread. Blocking;
 * one drain at a time per resumer (synchronized).
 *
 * <p>The token holds no body: {@link Builder#requestFor} rebuilds the original request from your
 * own
 * records (the business row the intent belongs to), for intents that must be re-submitted.
 */
public final class OutboxResumer {
  /**
   * What one drain did.
   *
   * @param resumed intents now done (removed)
   * @param failed intents that ended with a definite failure (removed)
   * @param rescheduled intents still open, due again later
   * @param abandoned intents out of tries, or not safe to re-send (removed; handle them by hand)
   */
  public record Report(int resumed, int failed, int rescheduled, int abandoned) {
    /** {@return intents tried} */
    public int tried() {
      return resumed + failed + rescheduled + abandoned;
    }
  }

  private final ResilientHttpClient client;
  private final ClientRuntime runtime;
  private final Outbox outbox;
  private final Function<ResumeToken, Request> requestFor;
  private final AsyncOperationPolicy policy;
  private final int batchSize;
  private final int maxTries;
  private final Duration retryDelay;
  private final BiConsumer<OutboxEntry, Response> onResult;

  private OutboxResumer(Builder b) {
    this.client = b.client;
    this.runtime = b.client.runtime();
    this.outbox = b.outbox;
    this.requestFor = b.requestFor;
    this.policy = b.policy;
    this.batchSize = b.batchSize;
    this.maxTries = b.maxTries;
    this.retryDelay = b.retryDelay;
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
   * Tries every due intent, up to the batch size, once.
   *
   * @return what it did
   */
  public synchronized Report drainOnce() {
    int resumed = 0;
    int failed = 0;
    int rescheduled = 0;
    int abandoned = 0;
    List<OutboxEntry> due = outbox.due(runtime.timeSource().now(), batchSize);
    for (OutboxEntry entry : due) {
      String outcome = tryOne(entry);
      switch (outcome) {
        case "resumed" -> resumed++;
        case "failed" -> failed++;
        case "rescheduled" -> rescheduled++;
        default -> abandoned++;
      }
      ResumeToken t = entry.token();
      OperationInfo info = KeyDecision.info(t);
      runtime.listeners().send("parkedOperationTried",
          l -> l.parkedOperationTried(info, entry, outcome));
    }
    return new Report(resumed, failed, rescheduled, abandoned);
  }

  private String tryOne(OutboxEntry entry) {
    ResumeToken token = entry.token();
    String key = token.idempotencyKey();
    Request request = null;
    if (!token.isAccepted()) {
      if (!token.idempotencyKeySent() && !AttemptOutcome.isIdempotentMethod(token.method())) {
        outbox.remove(key); // no key: a re-send could do it twice
        return "abandoned";
      }
      request = requestFor.apply(token);
      if (request == null) {
        outbox.remove(key);
        return "abandoned";
      }
    }
    try (Response r = request == null ? client.resume(token, policy)
        : client.resume(token, request, policy)) {
      int code = r.code();
      if (code == 408 || code == 429 || code >= 500) {
        return reschedule(entry, token); // the last answer of a retried resume: still open
      }
      outbox.remove(key);
      onResult.accept(entry, r);
      return r.isSuccessful() ? "resumed" : "failed";
    } catch (KeyRetentionExceededException | AsyncOperationFailedException e) {
      outbox.remove(key);
      return e instanceof KeyRetentionExceededException ? "abandoned" : "failed";
    } catch (IOException | RuntimeException e) {
      if (e instanceof IOException io && !OutboxExit.indefinite(io)) {
        outbox.remove(key);
        return "failed";
      }
      // A wait that stopped again may have learnt the status resource: keep the newer token.
      return reschedule(entry, ResumableFailure.of(e).orElse(token));
    }
  }

  private String reschedule(OutboxEntry entry, ResumeToken token) {
    if (entry.tries() + 1 >= maxTries) {
      outbox.remove(token.idempotencyKey());
      return "abandoned";
    }
    outbox.park(new OutboxEntry(token, entry.reason(), entry.parkedAt(), entry.tries() + 1,
        runtime.timeSource().now().plus(retryDelay)));
    return "rescheduled";
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
    private BiConsumer<OutboxEntry, Response> onResult = (e, r) -> { };

    private Builder(ResilientHttpClient client, Outbox outbox) {
      this.client = Objects.requireNonNull(client, "client");
      this.outbox = Objects.requireNonNull(outbox, "outbox");
    }

    /**
     * Rebuilds the original request (with its body) of an intent to re-submit; {@code null}
     * abandons
     * it. Default: always {@code null} (only accepted intents are resumed).
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
     * record. Default: nothing.
     *
     * @param onResult the handler
     * @return this builder
     */
    public Builder onResult(BiConsumer<OutboxEntry, Response> onResult) {
      this.onResult = Objects.requireNonNull(onResult, "onResult");
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
      return new OutboxResumer(this);
    }
  }
}

package io.github.resilienthttp;

import io.github.resilienthttp.internal.util.Ranges;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How to wait for an asynchronous operation that the server accepted with {@code 202}
 * ({@link Operation#awaitCompletion(AsyncOperationPolicy)}): where its status resource is, how often
 * to poll it, how to read its state, and whether to fetch the final result. Immutable and
 * thread-safe; build with {@link #builder()}, or take {@link #defaults()}.
 *
 * <p>Poll timing: the first poll waits {@link #minPollInterval()}, each next one twice the last, up
 * to {@link #maxPollInterval()}, plus up to {@link #jitter()} of it at random (so that many waiters
 * do not poll in step). A {@code Retry-After} on the {@code 202} or on any poll is honoured: the next
 * poll never starts before it, even when it is longer than the maximum interval. When the next poll
 * could only start after the deadline, the wait ends at once with
 * {@link AsyncOperationDeadlineExceededException} rather than sleeping into it.
 *
 * <p>The deadline is one budget of time for the submit and every poll and the result fetch:
 * {@link #deadline()} when set, otherwise the operation's ({@link Operation#deadline(Duration)} or
 * {@link RetryPolicy#deadline()}). Each poll is an ordinary GET operation whose deadline is the time
 * left, so its attempt timeouts shrink to it.
 */
public final class AsyncOperationPolicy {
  /** The method of the server-side cancel request ({@link ResilientHttpClient#cancelOnServer}). */
  public enum CancelMethod {
    /** {@code DELETE} on the cancel URL (idempotent: retried like any DELETE). */
    DELETE,
    /**
     * {@code POST} with an empty body on the cancel URL (Google's {@code :cancel}); not idempotent,
     * so an outcome-unknown failure is not re-sent.
     */
    POST
  }

  /** What a resume does with a key older than the {@link Builder#keyRetention key retention}. */
  public enum LateResume {
    /**
     * Go on, and report it: {@link OperationListener#keyRetentionExceeded} and a WARN log line.
     */
    WARN,
    /** Refuse with {@link KeyRetentionExceededException}, sending nothing. */
    REFUSE
  }

  private static final AsyncOperationPolicy DEFAULTS = builder().build();

  private final Duration minPollInterval;
  private final Duration maxPollInterval;
  private final double jitter;
  private final Duration deadline;
  private final StatusLocator statusLocator;
  private final StatusContract statusContract;
  private final boolean fetchResult;
  private final int maxStatusBodyBytes;
  private final Duration keyRetention;
  private final LateResume lateResume;
  private final boolean allowOtherOrigins;
  private final StatusLocator cancelLocator;
  private final CancelMethod cancelMethod;
  private final java.util.Set<String> carryHeaders;
  private final okhttp3.Headers followUpHeaders;

  private AsyncOperationPolicy(Builder b) {
    this.minPollInterval = b.minPollInterval;
    this.maxPollInterval = b.maxPollInterval;
    this.jitter = b.jitter;
    this.deadline = b.deadline;
    this.statusLocator = b.statusLocator;
    this.statusContract = b.statusContract;
    this.fetchResult = b.fetchResult;
    this.maxStatusBodyBytes = b.maxStatusBodyBytes;
    this.keyRetention = b.keyRetention;
    this.lateResume = b.lateResume;
    this.allowOtherOrigins = b.allowOtherOrigins;
    this.cancelLocator = b.cancelLocator;
    this.cancelMethod = b.cancelMethod;
    this.carryHeaders = b.carryHeaders;
    this.followUpHeaders = b.followUpHeaders;
  }

  /**
   * Poll every 1 s growing to 30 s, jitter 0.2, the operation's deadline, standard status headers, the
   * default status contract, fetch the result, 64 KiB of status body, key retention 24 h with
   * {@link LateResume#WARN} (Stripe forgets keys after 24 h).
   *
   * @return the defaults
   */
  public static AsyncOperationPolicy defaults() {
    return DEFAULTS;
  }

  /** {@return a builder with the defaults} */
  public static Builder builder() {
    return new Builder();
  }

  /** {@return a builder with these settings} */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.minPollInterval = minPollInterval;
    b.maxPollInterval = maxPollInterval;
    b.jitter = jitter;
    b.deadline = deadline;
    b.statusLocator = statusLocator;
    b.statusContract = statusContract;
    b.fetchResult = fetchResult;
    b.maxStatusBodyBytes = maxStatusBodyBytes;
    b.keyRetention = keyRetention;
    b.lateResume = lateResume;
    b.allowOtherOrigins = allowOtherOrigins;
    b.cancelLocator = cancelLocator;
    b.cancelMethod = cancelMethod;
    b.carryHeaders = carryHeaders;
    b.followUpHeaders = followUpHeaders;
    return b;
  }

  /** {@return the wait before the first poll, and the least wait between polls} */
  public Duration minPollInterval() {
    return minPollInterval;
  }

  /** {@return the longest wait between polls the SDK picks itself (a Retry-After may be longer)} */
  public Duration maxPollInterval() {
    return maxPollInterval;
  }

  /** {@return the random fraction, 0 to 1, added to each poll interval} */
  public double jitter() {
    return jitter;
  }

  /** {@return the deadline over the submit and the whole wait, when it replaces the operation's} */
  public Optional<Duration> deadline() {
    return Optional.ofNullable(deadline);
  }

  /** {@return how the status resource is found} */
  public StatusLocator statusLocator() {
    return statusLocator;
  }

  /**
   * {@return how the server-side cancel URL is found in the {@code 202} and in each status answer}
   */
  public StatusLocator cancelLocator() {
    return cancelLocator;
  }

  /** {@return the method of the server-side cancel request} */
  public CancelMethod cancelMethod() {
    return cancelMethod;
  }

  /** {@return how a poll's state is read} */
  public StatusContract statusContract() {
    return statusContract;
  }

  /** {@return whether the result is fetched from its location when the status gives one} */
  public boolean fetchResult() {
    return fetchResult;
  }

  /** {@return how much of a status body is read} */
  public int maxStatusBodyBytes() {
    return maxStatusBodyBytes;
  }

  /** {@return how long the server keeps idempotency keys, when known} */
  public Optional<Duration> keyRetention() {
    return Optional.ofNullable(keyRetention);
  }

  /** {@return what a resume does with a key older than the retention} */
  public LateResume lateResume() {
    return lateResume;
  }

  /**
   * Whether the status resource and the result may be on another origin (scheme, host, port) than
   * the submit.
   *
   * @return whether other origins are allowed
   */
  public boolean allowOtherOrigins() {
    return allowOtherOrigins;
  }

  /**
   * The names of the submit's own request headers that the polls and the result fetch carry, on the
   * submit's origin only (see {@link Builder#carryHeaders(java.util.Collection)}).
   *
   * @return the header names, default {@code Authorization}
   */
  public java.util.Set<String> carryHeaders() {
    return carryHeaders;
  }

  /**
   * Headers added to every follow-up call (polls, result fetch, {@link ResilientHttpClient#cancelOnServer
   * cancelOnServer}), on the operation's origin only: how a resumed wait, which has no submit request,
   * gets per-call credentials (see {@link Builder#followUpHeaders(okhttp3.Headers)}).
   *
   * @return the headers, default none
   */
  public okhttp3.Headers followUpHeaders() {
    return followUpHeaders;
  }

  @Override
  public String toString() {
    return "AsyncOperationPolicy{poll " + minPollInterval + ".." + maxPollInterval + ", jitter "
        + jitter + ", deadline " + (deadline == null ? "operation's" : deadline) + ", keyRetention "
        + keyRetention + " " + lateResume + "}";
  }

  /** Builds an {@link AsyncOperationPolicy}; validates at {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private Duration minPollInterval = Duration.ofSeconds(1);
    private Duration maxPollInterval = Duration.ofSeconds(30);
    private double jitter = 0.2;
    private Duration deadline;
    private StatusLocator statusLocator = StatusLocator.standardHeaders();
    private StatusContract statusContract = StatusContract.defaults();
    private boolean fetchResult = true;
    private int maxStatusBodyBytes = 64 * 1024;
    private Duration keyRetention = Duration.ofHours(24);
    private LateResume lateResume = LateResume.WARN;
    private boolean allowOtherOrigins;
    private StatusLocator cancelLocator = StatusLocator.standardCancelLinks();
    private CancelMethod cancelMethod = CancelMethod.DELETE;
    private java.util.Set<String> carryHeaders = java.util.Set.of("Authorization");
    private okhttp3.Headers followUpHeaders = okhttp3.Headers.EMPTY;

    private Builder() {}

    /**
     * The least wait between polls (and before the first). Default 1 s.
     *
     * @param minPollInterval 1 ms to 24 h
     * @return this builder
     */
    public Builder minPollInterval(Duration minPollInterval) {
      this.minPollInterval = Objects.requireNonNull(minPollInterval, "minPollInterval");
      return this;
    }

    /**
     * The longest wait between polls the SDK picks; a server's {@code Retry-After} may ask for more,
     * and is honoured. Default 30 s.
     *
     * @param maxPollInterval at least the minimum, at most 24 h
     * @return this builder
     */
    public Builder maxPollInterval(Duration maxPollInterval) {
      this.maxPollInterval = Objects.requireNonNull(maxPollInterval, "maxPollInterval");
      return this;
    }

    /**
     * The random fraction added to each interval the SDK picks (not to a {@code Retry-After}, which is
     * a lower bound already). Default 0.2.
     *
     * @param jitter 0 to 1
     * @return this builder
     */
    public Builder jitter(double jitter) {
      this.jitter = jitter;
      return this;
    }

    /**
     * The deadline over the submit and the whole wait, instead of the operation's (waits are often
     * much longer than one request).
     *
     * @param deadline 1 ms to 24 h, or {@code null} for the operation's
     * @return this builder
     */
    public Builder deadline(Duration deadline) {
      this.deadline = deadline;
      return this;
    }

    /**
     * How to find the status resource in the {@code 202}. Default
     * {@link StatusLocator#standardHeaders()}; for a body field,
     * {@code StatusLocator.standardHeaders().orElse(StatusLocator.bodyField("statusUrl"))}.
     *
     * @param statusLocator the locator
     * @return this builder
     */
    public Builder statusLocator(StatusLocator statusLocator) {
      this.statusLocator = Objects.requireNonNull(statusLocator, "statusLocator");
      return this;
    }

    /**
     * How to read a poll's state. Default {@link StatusContract#defaults()}; compose your own in front
     * with {@code myContract.orElse(StatusContract.defaults())}.
     *
     * @param statusContract the contract
     * @return this builder
     */
    public Builder statusContract(StatusContract statusContract) {
      this.statusContract = Objects.requireNonNull(statusContract, "statusContract");
      return this;
    }

    /**
     * Whether to GET the final result from its location (a {@code 303}'s {@code Location}, a
     * {@code resourceLocation} field, or the submit's {@code Location} beside another status header)
     * once the operation succeeded. Otherwise, or when there is no location, the terminal status
     * response is the result. Default {@code true}.
     *
     * @param fetchResult whether to fetch
     * @return this builder
     */
    public Builder fetchResult(boolean fetchResult) {
      this.fetchResult = fetchResult;
      return this;
    }

    /**
     * How much of a {@code 202} or status body is read for the locator and the contract. Default 64 KiB.
     *
     * @param maxStatusBodyBytes 1 to 1 MiB
     * @return this builder
     */
    public Builder maxStatusBodyBytes(int maxStatusBodyBytes) {
      this.maxStatusBodyBytes = maxStatusBodyBytes;
      return this;
    }

    /**
     * How long the server keeps idempotency keys, and what a resume does with an older key. Default
     * 24 h, {@link LateResume#WARN}.
     *
     * @param keyRetention at least 1 ms, or {@code null} for unknown (no check)
     * @param lateResume what to do with an older key
     * @return this builder
     */
    public Builder keyRetention(Duration keyRetention, LateResume lateResume) {
      this.keyRetention = keyRetention;
      this.lateResume = Objects.requireNonNull(lateResume, "lateResume");
      return this;
    }

    /**
     * Whether to follow a status resource or result location on another origin (scheme, host, port)
     * than the submit's. Default {@code false}: the server's headers decide where polls go, and the
     * wrapped client's interceptors add credentials to every poll, so a status URL elsewhere would
     * send them there; such a wait fails with {@link PollFailedException} (reason
     * {@code other-origin}). The origin is the submit's original request URL (before any redirect of
     * the submit), and the rule holds for every hop of every follow-up call: a redirect
     * ({@code 301/302/303/307/308}) of a poll, the result fetch or the cancel to another origin is
     * refused the same way, before anything is sent there. Turn on for APIs that poll another host
     * (some cloud control planes): then the headers carried from the submit
     * ({@link #carryHeaders(java.util.Collection)}, {@link #followUpHeaders(okhttp3.Headers)}) still
     * stay on the submit's origin, but what the wrapped client's interceptors add is theirs to
     * decide (make a credential interceptor check the host).
     *
     * @param allow whether to allow other origins
     * @return this builder
     */
    public Builder allowOtherOrigins(boolean allow) {
      this.allowOtherOrigins = allow;
      return this;
    }

    /**
     * How to find the URL that cancels the server's job, in the {@code 202} and in each status answer
     * (the latest found wins); carried in the {@link ResumeToken#cancelUrl() resume token}. Default
     * {@link StatusLocator#standardCancelLinks()}. Without one, the server's job cannot be cancelled
     * through the SDK: cancelling the wait only stops polling.
     *
     * @param cancelLocator the locator; return {@code null} when there is no cancel URL
     * @return this builder
     */
    public Builder cancelLocator(StatusLocator cancelLocator) {
      this.cancelLocator = Objects.requireNonNull(cancelLocator, "cancelLocator");
      return this;
    }

    /**
     * The method of {@link ResilientHttpClient#cancelOnServer}. Default {@link CancelMethod#DELETE}.
     *
     * @param cancelMethod the method
     * @return this builder
     */
    public Builder cancelMethod(CancelMethod cancelMethod) {
      this.cancelMethod = Objects.requireNonNull(cancelMethod, "cancelMethod");
      return this;
    }

    /**
     * The submit's own request headers (set on the {@link okhttp3.Request}, not by interceptors) that
     * the polls and the result fetch carry. They go only to the submit's origin (scheme, host, port
     * of its original URL, before redirects), on every hop: never to a status URL, result or redirect
     * elsewhere, even with {@link #allowOtherOrigins(boolean)}. Default {@code Authorization} (a
     * per-tenant token set on the request would otherwise be missing from the first poll); an empty
     * collection carries none. Credentials that the wrapped client's interceptors add are added by
     * them to every call anyway.
     *
     * @param names header names (case-insensitive HTTP tokens)
     * @return this builder
     * @throws IllegalArgumentException when a name is not a header name
     */
    public Builder carryHeaders(java.util.Collection<String> names) {
      java.util.Set<String> copy = new java.util.LinkedHashSet<>();
      for (String name : Objects.requireNonNull(names, "names")) {
        if (name == null || name.isEmpty() || !IdempotencyKeyPolicy.Builder.isToken(name)) {
          throw new IllegalArgumentException("carryHeaders: '" + name + "' is not a header name");
        }
        copy.add(name);
      }
      this.carryHeaders = java.util.Collections.unmodifiableSet(copy);
      return this;
    }

    /**
     * Headers for every follow-up call (polls, the result fetch, {@link
     * ResilientHttpClient#cancelOnServer cancelOnServer}), sent on the operation's origin only, like
     * {@link #carryHeaders(java.util.Collection)}; they replace a carried header of the same name. A
     * resumed wait ({@link ResilientHttpClient#resume(ResumeToken, AsyncOperationPolicy)}) and a
     * cancel have no submit request to carry from: credentials reach them through the wrapped
     * client's interceptors, or through these headers (e.g. the tenant's {@code Authorization} read
     * back with the token). Default none.
     *
     * @param headers the headers
     * @return this builder
     */
    public Builder followUpHeaders(okhttp3.Headers headers) {
      this.followUpHeaders = Objects.requireNonNull(headers, "headers");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the policy
     * @throws IllegalArgumentException when a setting is out of range
     */
    public AsyncOperationPolicy build() {
      RetryPolicy.Builder.checkRange("minPollInterval", minPollInterval, Duration.ofMillis(1));
      RetryPolicy.Builder.checkRange("maxPollInterval", maxPollInterval, minPollInterval);
      Ranges.check("jitter", jitter, 0, 1);
      if (deadline != null) {
        RetryPolicy.Builder.checkRange("deadline", deadline, Duration.ofMillis(1));
      }
      Ranges.check("maxStatusBodyBytes", maxStatusBodyBytes, 1, 1024 * 1024);
      if (keyRetention != null) {
        Ranges.atLeast("keyRetention", keyRetention, Duration.ofMillis(1));
      }
      return new AsyncOperationPolicy(this);
    }
  }
}

package io.github.resilienthttp;

import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Wraps an existing {@link OkHttpClient} and runs requests as {@link Operation}s: one idempotency key
 * per operation, reused on every attempt; outcomes classified by a pluggable
 * {@link ResponseClassifier}; exponential full-jitter backoff that honours {@code Retry-After}; and a
 * total deadline over all attempts.
 *
 * <pre>{@code
 * ResilientHttpClient client = ResilientHttpClient.wrap(okHttpClient)
 *     .retryPolicy(RetryPolicy.builder()
 *         .maxAttempts(4)
 *         .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(100), Duration.ofSeconds(5)))
 *         .deadline(Duration.ofSeconds(10))
 *         .build())
 *     .build();
 * try (Response r = client.operation(request).execute()) { ... }
 * }</pre>
 *
 * <p>The wrapped client is not modified. The SDK derives a client from it with
 * {@link OkHttpClient#newBuilder()}, which shares its connection pool, dispatcher, event listener and
 * interceptors, and puts its own interceptors first: so the user's application interceptors run once
 * per attempt (an auth interceptor can refresh a token between attempts), and its network
 * interceptor sees every request that goes on the wire.
 *
 * <p>Immutable and thread-safe: share one instance.
 */
public final class ResilientHttpClient {
  private final OkHttpClient wrapped;
  private final OkHttpClient forOperations;
  private final RetryPolicy retryPolicy;
  private final ResponseClassifier classifier;
  private final IdempotencyKeyPolicy idempotencyKeyPolicy;
  private final TimeSource timeSource;
  private final RandomGenerator random;

  private ResilientHttpClient(Builder b) {
    this.wrapped = b.okHttpClient;
    this.retryPolicy = b.retryPolicy;
    this.classifier = b.classifier;
    this.idempotencyKeyPolicy = b.idempotencyKeyPolicy;
    this.timeSource = b.timeSource;
    this.random = b.random;
    OkHttpClient.Builder derived = wrapped.newBuilder();
    derived.interceptors().add(0, new RetryInterceptor());
    derived.interceptors().add(0, new IdempotencyKeyInterceptor());
    derived.networkInterceptors().add(0, new NetworkAttemptTracker());
    this.forOperations = derived.build();
  }

  /**
   * Starts building a client around {@code okHttpClient}.
   *
   * @param okHttpClient the client to use for every attempt; not modified
   */
  public static Builder wrap(OkHttpClient okHttpClient) {
    return new Builder(Objects.requireNonNull(okHttpClient, "okHttpClient"));
  }

  /**
   * A new operation for {@code request}, with a new idempotency key (or the key already in the
   * request's key header). Nothing is sent until {@link Operation#execute()}.
   *
   * @throws IllegalArgumentException when the request's own key header is not a valid key
   */
  public Operation operation(Request request) {
    return new Operation(this, Objects.requireNonNull(request, "request"));
  }

  /** A builder with this client's settings, to derive a differently configured client. */
  public Builder newBuilder() {
    return new Builder(wrapped)
        .retryPolicy(retryPolicy)
        .classifier(classifier)
        .idempotencyKeys(idempotencyKeyPolicy)
        .timeSource(timeSource)
        .random(random);
  }

  public RetryPolicy retryPolicy() {
    return retryPolicy;
  }

  public ResponseClassifier classifier() {
    return classifier;
  }

  public IdempotencyKeyPolicy idempotencyKeyPolicy() {
    return idempotencyKeyPolicy;
  }

  public TimeSource timeSource() {
    return timeSource;
  }

  /** The wrapped client, as given. */
  public OkHttpClient wrappedClient() {
    return wrapped;
  }

  RandomGenerator random() {
    return random;
  }

  OkHttpClient okHttpClientForOperations() {
    return forOperations;
  }

  /** Builds a {@link ResilientHttpClient}. Not thread-safe. */
  public static final class Builder {
    private final OkHttpClient okHttpClient;
    private RetryPolicy retryPolicy = RetryPolicy.defaults();
    private ResponseClassifier classifier = ResponseClassifier.defaults();
    private IdempotencyKeyPolicy idempotencyKeyPolicy = IdempotencyKeyPolicy.defaults();
    private TimeSource timeSource = TimeSource.system();
    private RandomGenerator random = ThreadLocalJitter.INSTANCE;

    private Builder(OkHttpClient okHttpClient) {
      this.okHttpClient = okHttpClient;
    }

    /** Default {@link RetryPolicy#defaults()}. */
    public Builder retryPolicy(RetryPolicy retryPolicy) {
      this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
      return this;
    }

    /** Default {@link ResponseClassifier#defaults()}. */
    public Builder classifier(ResponseClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /** Default {@link IdempotencyKeyPolicy#defaults()}. */
    public Builder idempotencyKeys(IdempotencyKeyPolicy idempotencyKeyPolicy) {
      this.idempotencyKeyPolicy = Objects.requireNonNull(idempotencyKeyPolicy, "idempotencyKeyPolicy");
      return this;
    }

    /** The clock and sleeper. Default {@link TimeSource#system()}; tests inject a fake. */
    public Builder timeSource(TimeSource timeSource) {
      this.timeSource = Objects.requireNonNull(timeSource, "timeSource");
      return this;
    }

    /**
     * The random source for backoff jitter; must be thread-safe, since all operations of the client
     * share it. Default: {@link ThreadLocalRandom} of the calling thread. Tests inject a seeded one.
     */
    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    public ResilientHttpClient build() {
      return new ResilientHttpClient(this);
    }
  }

  /** Jitter from the calling thread's {@link ThreadLocalRandom}: thread-safe, contention-free. */
  private static final class ThreadLocalJitter implements RandomGenerator {
    static final ThreadLocalJitter INSTANCE = new ThreadLocalJitter();

    @Override
    public long nextLong() {
      return ThreadLocalRandom.current().nextLong();
    }

    @Override
    public long nextLong(long bound) {
      return ThreadLocalRandom.current().nextLong(bound);
    }

    @Override
    public String toString() {
      return "ThreadLocalRandom";
    }
  }
}

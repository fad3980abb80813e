package io.github.resilienthttp.micrometer;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationResult;
import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutboxEntry;
import io.github.resilienthttp.OutcomeQuery;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResumeToken;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import okhttp3.HttpUrl;

/**
 * Micrometer metrics for the SDK, as an {@link OperationListener}. Requires
 * {@code io.micrometer:micrometer-core} on the class path (an optional dependency of the SDK).
 *
 * <pre>{@code
 * MicrometerOperationMetrics metrics = new MicrometerOperationMetrics(registry);
 * ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).addListener(metrics).build();
 * metrics.bindTo(client);                          // budget gauge
 * metrics.bindCircuitBreaker(client, targetUrl);   // breaker state gauge for one target
 * metrics.bindConcurrencyLimit(client, targetUrl); // adaptive limit gauge for one target
 * }</pre>
 *
 * <table>
 * <caption>Meters (tags in brackets)</caption>
 * <tr><th>name</th><th>type</th><th>meaning</th></tr>
 * <tr><td>{@code http.client.operations} [outcome, winner.kind=first|retry|hedge|none,
 *     http.request.method, server.address]</td>
 *     <td>counter</td><td>operations by {@link OperationResult.Outcome}</td></tr>
 * <tr><td>{@code http.client.operation.duration} [outcome, http.request.method, server.address]</td>
 *     <td>timer</td><td>from execute() to return, all attempts and waits</td></tr>
 * <tr><td>{@code http.client.attempts} [attempt.kind=first|retry|hedge|poll|query, decision,
 *     http.request.method, server.address]</td><td>counter</td><td>attempts by kind (a poll of an
 *     accepted operation and an outcome query are attempts of their own kind) and decision</td></tr>
 * <tr><td>{@code http.client.operation.resend_count} [http.request.method, server.address]</td>
 *     <td>distribution summary</td><td>retries per operation (OpenTelemetry's
 *     {@code http.request.resend_count})</td></tr>
 * <tr><td>{@code resilient.http.replays}, {@code resilient.http.in_progress},
 *     {@code resilient.http.retry_budget.refusals}, {@code resilient.http.circuit_breaker.rejections},
 *     {@code resilient.http.bulkhead.rejections} [server.address]</td><td>counters</td><td></td></tr>
 * <tr><td>{@code resilient.http.throttled}, {@code resilient.http.limited},
 *     {@code resilient.http.paced} [server.address]</td><td>counters</td><td>attempts refused
 *     locally by adaptive throttling, refused by the adaptive concurrency limit (both never sent),
 *     and attempts that waited for a rate-limit reset</td></tr>
 * <tr><td>{@code resilient.http.concurrency_limit} [server.address]</td><td>gauge</td><td>the
 *     target's current adaptive concurrency limit ({@link #bindConcurrencyLimit})</td></tr>
 * <tr><td>{@code resilient.http.async.accepted}, {@code resilient.http.parked}
 *     [server.address]</td><td>counters</td><td>202-accepted operations; operations parked in an
 *     outbox without a definite outcome</td></tr>
 * <tr><td>{@code resilient.http.parked.tried} [outcome=resumed|failed|rescheduled|abandoned|lost,
 *     server.address]</td><td>counter</td><td>parked operations a resumer tried, by its outcome
 *     ({@code lost}: another resumer had taken the intent over)</td></tr>
 * <tr><td>{@code resilient.http.outbox.depth} [outbox]</td><td>gauge</td><td>entries parked in
 *     an outbox, claimed or not ({@link #bindOutbox})</td></tr>
 * <tr><td>{@code resilient.http.outbox.oldest_age} [outbox]</td><td>gauge, seconds</td><td>age of
 *     the oldest entry (since first parked); 0 when empty ({@link #bindOutbox})</td></tr>
 * <tr><td>{@code resilient.http.outcome_queries} [answer=found|not_found|cannot_tell,
 *     server.address]</td><td>counter</td><td>outcome queries by answer</td></tr>
 * <tr><td>{@code resilient.http.key_retention_exceeded} [refused, server.address]</td>
 *     <td>counter</td><td>resumes with a key older than its retention, warned or refused</td></tr>
 * <tr><td>{@code resilient.http.retry_budget.tokens}</td><td>gauge</td><td>retries the budget
 *     would allow now</td></tr>
 * <tr><td>{@code resilient.http.circuit_breaker.state} [name]</td><td>gauge</td><td>0 closed,
 *     1 open, 2 half-open, 3 other (disabled, forced open, metrics only)</td></tr>
 * </table>
 *
 * <p>Tags are low-cardinality: never the idempotency key, the path or the full URL; names follow the
 * OpenTelemetry HTTP client semantic conventions where they apply. Thread-safe.
 */
public final class MicrometerOperationMetrics implements OperationListener {
  private final MeterRegistry registry;

  /**
   * Metrics registered in {@code registry}.
   *
   * @param registry the registry to register meters in
   */
  public MicrometerOperationMetrics(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  /**
   * Registers the retry budget gauge of {@code client}.
   *
   * @param client the client
   * @return this
   */
  public MicrometerOperationMetrics bindTo(ResilientHttpClient client) {
    Gauge.builder("resilient.http.retry_budget.tokens", client.retryBudget(),
            b -> b.availableTokens())
        .description("retries the retry budget would allow now").register(registry);
    return this;
  }

  /**
   * Registers the depth and oldest-entry-age gauges of {@code outbox}. Each scrape calls
   * {@link Outbox#size()} and {@link Outbox#oldestParkedAt()} (a query each on a JDBC outbox); when
   * one throws, Micrometer reports the gauge as NaN. The age is measured on the registry's clock.
   *
   * @param outbox the outbox
   * @param name the {@code outbox} tag, e.g. the table name; low-cardinality
   * @return this
   */
  public MicrometerOperationMetrics bindOutbox(Outbox outbox, String name) {
    Objects.requireNonNull(outbox, "outbox");
    Objects.requireNonNull(name, "name");
    Gauge.builder("resilient.http.outbox.depth", outbox, Outbox::size).tag("outbox", name)
        .description("entries parked in the outbox, claimed or not").register(registry);
    Clock clock = registry.config().clock();
    Gauge.builder("resilient.http.outbox.oldest_age", outbox,
            o -> o.oldestParkedAt()
                .map(t -> Math.max(0, clock.wallTime() - t.toEpochMilli()) / 1000.0).orElse(0.0))
        .tag("outbox", name).baseUnit("seconds")
        .description("age of the oldest parked entry since it was first parked").register(registry);
    return this;
  }

  /**
   * Registers the state gauge of the circuit breaker that guards {@code target}, if any.
   *
   * @param client the client
   * @param target a URL of the target
   * @return this
   */
  public MicrometerOperationMetrics bindCircuitBreaker(ResilientHttpClient client, HttpUrl target) {
    client.circuitBreakerFor(target).ifPresent(cb ->
        Gauge.builder("resilient.http.circuit_breaker.state", cb, MicrometerOperationMetrics::state)
            .tag("name", cb.getName()).register(registry));
    return this;
  }

  /**
   * Registers the gauge {@code resilient.http.concurrency_limit} [server.address]: the current
   * adaptive concurrency limit of {@code target}'s {@code scheme://host:port}
   * ({@link ResilientHttpClient#currentConcurrencyLimit}); {@code NaN} until the client has sent
   * to the target, or when it has no adaptive limit.
   *
   * @param client the client
   * @param target any URL of the target
   * @return this
   */
  public MicrometerOperationMetrics bindConcurrencyLimit(ResilientHttpClient client,
      HttpUrl target) {
    Objects.requireNonNull(target, "target");
    Gauge.builder("resilient.http.concurrency_limit", client,
            c -> c.currentConcurrencyLimit(target).stream().mapToDouble(i -> i).findFirst()
                .orElse(Double.NaN))
        .tag("server.address", target.host()).register(registry);
    return this;
  }

  static double state(CircuitBreaker cb) {
    switch (cb.getState()) {
      case CLOSED:
        return 0;
      case OPEN:
        return 1;
      case HALF_OPEN:
        return 2;
      default:
        return 3;
    }
  }

  private static Tags tags(OperationInfo op) {
    return Tags.of("http.request.method", op.method(), "server.address", op.host());
  }

  @Override
  public void attemptEnded(OperationInfo op, int attempt, AttemptKind kind, int statusCode,
      IOException failure, Decision decision, Duration duration) {
    Counter.builder("http.client.attempts")
        .tags(tags(op))
        .tag("attempt.kind", kind.name().toLowerCase(java.util.Locale.ROOT))
        .tag("decision", decision.kind().name())
        .register(registry).increment();
  }

  @Override
  public void retryBudgetRefused(OperationInfo op, int attempt) {
    count("resilient.http.retry_budget.refusals", op);
  }

  @Override
  public void circuitBreakerRejected(OperationInfo op, String breakerName, int attempt) {
    count("resilient.http.circuit_breaker.rejections", op);
  }

  @Override
  public void bulkheadRejected(OperationInfo op, int attempt) {
    count("resilient.http.bulkhead.rejections", op);
  }

  @Override
  public void throttled(OperationInfo op, int attempt) {
    count("resilient.http.throttled", op);
  }

  @Override
  public void limited(OperationInfo op, int attempt) {
    count("resilient.http.limited", op);
  }

  @Override
  public void paced(OperationInfo op, int attempt, Duration wait) {
    count("resilient.http.paced", op);
  }

  @Override
  public void replayDetected(OperationInfo op, int attempt) {
    count("resilient.http.replays", op);
  }

  @Override
  public void inProgress(OperationInfo op, int attempt) {
    count("resilient.http.in_progress", op);
  }

  @Override
  public void operationEnded(OperationInfo op, OperationResult result) {
    Tags t = tags(op).and("outcome", result.outcome().name());
    Counter.builder("http.client.operations").tags(t)
        .tag("winner.kind", result.winningKind()
            .map(k -> k.name().toLowerCase(java.util.Locale.ROOT)).orElse("none"))
        .register(registry).increment();
    Timer.builder("http.client.operation.duration").tags(t).register(registry)
        .record(result.elapsed());
    registry.summary("http.client.operation.resend_count", tags(op))
        .record(Math.max(0, result.attempts() - 1));
  }

  @Override
  public void asyncOperationAccepted(OperationInfo op, ResumeToken token) {
    count("resilient.http.async.accepted", op);
  }

  @Override
  public void operationParked(OperationInfo op, OutboxEntry entry) {
    count("resilient.http.parked", op);
  }

  @Override
  public void parkedOperationTried(OperationInfo op, OutboxEntry entry, String outcome) {
    counter("resilient.http.parked.tried",
        Tags.of("server.address", op.host(), "outcome", outcome)).increment();
  }

  @Override
  public void outcomeQueried(OperationInfo op, OutcomeQuery.Answer answer) {
    counter("resilient.http.outcome_queries", Tags.of("server.address", op.host(),
        "answer", answer.name().toLowerCase(java.util.Locale.ROOT))).increment();
  }

  @Override
  public void keyRetentionExceeded(OperationInfo op, ResumeToken token, Duration keyAge,
      boolean refused) {
    counter("resilient.http.key_retention_exceeded",
        Tags.of("server.address", op.host(), "refused", Boolean.toString(refused))).increment();
  }

  private void count(String name, OperationInfo op) {
    counter(name, Tags.of("server.address", op.host())).increment();
  }

  /**
   * Through {@code counter(String, Iterable<Tag>)}, not Micrometer 1.16's {@code counter(String,
   * Tags)}: the binary then also runs on older Micrometer lines (Spring Boot 3.5 brings 1.15).
   */
  private Counter counter(String name, Iterable<Tag> tags) {
    return registry.counter(name, tags);
  }
}

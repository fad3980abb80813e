package io.github.resilienthttp.bench;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.failsafe.okhttp.FailsafeCall;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The healthy path, the same request through five callers on one {@link OkHttpClient}: OkHttp
 * itself, the SDK blocking and async, Failsafe's OkHttp module and resilience4j-retry. Every caller
 * reads the whole body and closes the response. The server is a {@link LoopbackHttpServer}: it
 * always answers 200 at once, so no retry ever happens and what differs between callers is their
 * own cost per operation.
 *
 * <p>Each caller is configured as its documentation suggests for "3 attempts, exponential backoff
 * with full jitter from 100 ms, at most 5 s, retry I/O errors and 5xx":
 *
 * <ul>
 *   <li>SDK: {@code ResilientHttpClient.wrap(okHttp).build()}, i.e. all defaults (3 attempts,
 *       {@code exponentialFullJitter(100 ms, 5 s)}, 30 s deadline, token-bucket retry budget,
 *       per-target circuit breaker, a new idempotency key per POST).
 *   <li>Failsafe: {@code RetryPolicy} handling {@code IOException} and results with code >= 500, 3
 *       attempts, {@code withBackoff(50 ms, 2.5 s)} plus {@code withJitter(1.0)}: Failsafe's jitter
 *       of factor 1 draws uniformly in {@code [0, 2 × delay]}, which is full jitter over
 *       {@code [0, 100 ms × 2^(n-1)]} capped at 5 s.
 *   <li>resilience4j: {@code Retry} with 3 attempts, {@code retryExceptions(IOException)},
 *       {@code retryOnResult(code >= 500)}, closing a discarded response before each retry, and
 *       {@code ofExponentialRandomBackoff(50 ms, 2.0, 1.0, 5 s)} (the same distribution).
 * </ul>
 *
 * <p>The rows above only retry, while the SDK also runs a per-target circuit breaker, a budget and
 * a deadline. The <em>like-for-like stacks</em> add what the SDK runs, composed as each library's
 * documentation shows, per target (host), with the SDK configured with a bulkhead of the same size:
 *
 * <ul>
 *   <li>Failsafe: {@code Failsafe.with(retryPolicy).compose(circuitBreaker).compose(bulkhead)}
 *       (outermost first), the breaker handling {@code IOException} and 5xx results, a bulkhead of
 *       {@value #STACK_BULKHEAD} permits;
 *   <li>resilience4j: {@code Retry(CircuitBreaker(Bulkhead(call)))}, the order of its
 *       {@code Decorators}, a breaker recording {@code IOException} and 5xx results, a bulkhead of
 *       {@value #STACK_BULKHEAD} concurrent calls;
 *   <li>SDK: the defaults plus {@code bulkhead(maxConcurrentCalls = }{@value #STACK_BULKHEAD}{@code )}.
 * </ul>
 *
 * <p>Subclasses choose the JMH mode and thread count; this class holds the shared state.
 */
@State(Scope.Benchmark)
public abstract class SuccessPath {
  static final MediaType JSON = MediaType.get("application/json");
  static final byte[] PAYMENT = "{\"order\":\"order-1\",\"amount\":1000,\"currency\":\"EUR\"}"
      .getBytes(java.nio.charset.StandardCharsets.UTF_8);

  /** GET has no idempotency key; a POST gets a new key per SDK operation, none from the peers. */
  @Param({"GET", "POST"})
  public String method;

  LoopbackHttpServer server;
  OkHttpClient okHttp;
  Request request;
  /** {@link #request} plus a fixed idempotency key header. */
  Request keyedRequest;
  ResilientHttpClient sdk;
  FailsafeExecutor<Response> failsafe;
  Retry retry;
  /** The SDK's defaults plus a bulkhead: the SDK's row of the like-for-like stacks. */
  ResilientHttpClient sdkWithBulkhead;
  /** Failsafe's retry, breaker and bulkhead, one stack per target host. */
  final ConcurrentMap<String, FailsafeExecutor<Response>> failsafeStacks = new ConcurrentHashMap<>();
  CircuitBreakerRegistry r4jBreakers;
  BulkheadRegistry r4jBulkheads;

  /** The bulkhead size of every like-for-like stack. */
  static final int STACK_BULKHEAD = 64;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    // -Dbench.server=http://127.0.0.1:18080 uses a LoopbackHttpServer run in its own JVM (its main).
    String external = System.getProperty("bench.server");
    server = external == null ? LoopbackHttpServer.start() : null;
    okHttp = new OkHttpClient.Builder().build();
    Request.Builder b = new Request.Builder().url(
        external == null ? server.url("/payments") : HttpUrl.get(external).resolve("/payments"));
    request = "POST".equals(method) ? b.post(RequestBody.create(PAYMENT, JSON)).build() : b.build();
    keyedRequest = request.newBuilder()
        .header("Idempotency-Key", "3b241101-e2bb-4255-8caf-4136c566a962").build();
    sdk = ResilientHttpClient.wrap(okHttp).build();
    failsafe = Failsafe.with(failsafeRetryPolicy());
    retry = resilience4jRetry();
    rebuildStacks();
  }

  /** (Re)builds the SDK's and the peers' like-for-like stacks on {@link #okHttp}. */
  void rebuildStacks() {
    sdkWithBulkhead = ResilientHttpClient.wrap(okHttp).bulkhead(stackBulkhead()).build();
    failsafeStacks.clear();
    r4jBreakers = resilience4jBreakers();
    r4jBulkheads = resilience4jBulkheads();
  }

  /** The bulkhead of every like-for-like stack: {@value #STACK_BULKHEAD} calls, no waiting. */
  static io.github.resilience4j.bulkhead.BulkheadConfig stackBulkhead() {
    return io.github.resilience4j.bulkhead.BulkheadConfig.custom()
        .maxConcurrentCalls(STACK_BULKHEAD).maxWaitDuration(Duration.ZERO).build();
  }

  /**
   * resilience4j's stack without its bulkhead ({@code breaker}) or without its breaker
   * ({@code !breaker}), for the request's target, with a new key per POST: what each part of the
   * stack costs.
   */
  int resilience4jPartCall(boolean breaker) throws Throwable {
    Request r = "POST".equals(method) ? withNewKey(request) : request;
    String target = r.url().host();
    io.github.resilience4j.core.functions.CheckedSupplier<Response> send =
        () -> okHttp.newCall(r).execute();
    return consume(Retry.decorateCheckedSupplier(retry, breaker
        ? CircuitBreaker.decorateCheckedSupplier(r4jBreakers.circuitBreaker(target), send)
        : io.github.resilience4j.bulkhead.Bulkhead.decorateCheckedSupplier(
            r4jBulkheads.bulkhead(target), send)).get());
  }

  /** resilience4j's retry alone, with a new key per POST. */
  int resilience4jRetryCall() throws Throwable {
    return "POST".equals(method) ? resilience4jWithNewKeyCall() : resilience4jCall();
  }

  /** resilience4j's per-target breakers of the like-for-like stack: IOException and 5xx are failures. */
  static CircuitBreakerRegistry resilience4jBreakers() {
    return CircuitBreakerRegistry.of(CircuitBreakerConfig.<Response>custom()
        .recordExceptions(IOException.class)
        .recordResult(r -> r instanceof Response && ((Response) r).code() >= 500)
        .build());
  }

  /** resilience4j's per-target bulkheads of the like-for-like stack: {@value #STACK_BULKHEAD} calls, no wait. */
  static BulkheadRegistry resilience4jBulkheads() {
    return BulkheadRegistry.of(BulkheadConfig.custom()
        .maxConcurrentCalls(STACK_BULKHEAD).maxWaitDuration(Duration.ZERO).build());
  }

  /** Failsafe's full stack for one target, as its documentation composes policies. */
  static FailsafeExecutor<Response> newFailsafeStack() {
    return Failsafe.with(failsafeRetryPolicy()).compose(failsafeBreaker()).compose(failsafeBulkhead());
  }

  /** The breaker of Failsafe's like-for-like stack: IOException and 5xx are failures. */
  private static dev.failsafe.CircuitBreaker<Response> failsafeBreaker() {
    return dev.failsafe.CircuitBreaker.<Response>builder()
        .handle(IOException.class)
        .handleResultIf(r -> r.code() >= 500)
        .withFailureRateThreshold(50, 10, Duration.ofSeconds(60))
        .withDelay(Duration.ofSeconds(30))
        .build();
  }

  /** The bulkhead of Failsafe's like-for-like stack: {@value #STACK_BULKHEAD} calls. */
  private static dev.failsafe.Bulkhead<Response> failsafeBulkhead() {
    return dev.failsafe.Bulkhead.<Response>builder(STACK_BULKHEAD).build();
  }

  /** Failsafe's retry policy, as its users would write it (see above); also {@link FaultComparison}'s. */
  static dev.failsafe.RetryPolicy<Response> failsafeRetryPolicy() {
    return dev.failsafe.RetryPolicy.<Response>builder()
        .handle(IOException.class)
        .handleResultIf(r -> r.code() >= 500)
        .withMaxAttempts(3)
        .withBackoff(Duration.ofMillis(50), Duration.ofMillis(2500))
        .withJitter(1.0)
        .build();
  }

  /** resilience4j's retry, as its users would write it (see above); also {@link FaultComparison}'s. */
  static Retry resilience4jRetry() {
    return Retry.of("payments", RetryConfig.<Response>custom()
        .maxAttempts(3)
        .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(
            Duration.ofMillis(50), 2.0, 1.0, Duration.ofSeconds(5)))
        .retryExceptions(IOException.class)
        .retryOnResult(r -> r.code() >= 500)
        .consumeResultBeforeRetryAttempt((attempt, r) -> r.close())
        .build());
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    if (server != null) {
      server.close();
    }
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  int rawOkHttpCall() throws IOException {
    return consume(okHttp.newCall(request).execute());
  }

  /**
   * Diagnostic, not a peer: raw OkHttp sending the same request plus a fixed
   * {@code Idempotency-Key} header (made once, in the set-up). Shows what the key costs on the wire
   * and at the server, apart from making it and copying the request.
   */
  int rawOkHttpWithKeyHeaderCall() throws IOException {
    return consume(okHttp.newCall(keyedRequest).execute());
  }

  /**
   * Diagnostic, not a peer: raw OkHttp with a new {@code Idempotency-Key} per call, made the usual
   * way ({@code UUID.randomUUID()} and a copy of the request with the header): what a hand-written
   * caller pays to make a POST safe to retry, before any retry logic.
   */
  int rawOkHttpWithNewKeyCall() throws IOException {
    return consume(okHttp.newCall(withNewKey(request)).execute());
  }

  /** The request plus a new random {@code Idempotency-Key}, as a caller adds one by hand. */
  static Request withNewKey(Request request) {
    return request.newBuilder().header("Idempotency-Key", UUID.randomUUID().toString()).build();
  }

  /**
   * Diagnostic, not a peer: raw OkHttp with a 30 s call timeout, which the SDK set on every
   * operation as its deadline's backstop until its own watchdog replaced it. Shows what OkHttp's
   * call timeout costs per call.
   */
  int rawOkHttpWithCallTimeoutCall() throws IOException {
    Call call = okHttp.newCall(request);
    call.timeout().timeout(30, TimeUnit.SECONDS);
    return consume(call.execute());
  }

  /**
   * Diagnostic, not a peer: OkHttp's own asynchronous call, {@code enqueue} completing a future, the
   * baseline for {@link #sdkAsyncCall()}. The attempt runs on an OkHttp dispatcher thread, as the
   * SDK's async attempts do.
   */
  int rawOkHttpAsyncCall() throws IOException, InterruptedException {
    CompletableFuture<Response> future = new CompletableFuture<>();
    okHttp.newCall(request).enqueue(new Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        future.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call call, Response response) {
        future.complete(response);
      }
    });
    try {
      return consume(future.get(30, TimeUnit.SECONDS));
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IOException(e);
    }
  }

  int sdkSyncCall() throws IOException {
    return consume(sdk.operation(request).execute());
  }

  int sdkAsyncCall() throws IOException, InterruptedException {
    try {
      return consume(sdk.operation(request).executeAsync().get(30, TimeUnit.SECONDS));
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IOException(e);
    }
  }

  int failsafeCall() throws IOException {
    return failsafeCall(request);
  }

  int resilience4jCall() throws Throwable {
    return resilience4jCall(request);
  }

  /**
   * Like for like with the SDK's POST, not the peer rows: Failsafe retrying a request that
   * carries a new idempotency key per call, added by hand ({@link #withNewKey}), as a caller who
   * retries a POST safely with Failsafe must.
   */
  int failsafeWithNewKeyCall() throws IOException {
    return failsafeCall(withNewKey(request));
  }

  /** The same for resilience4j: see {@link #failsafeWithNewKeyCall()}. */
  int resilience4jWithNewKeyCall() throws Throwable {
    return resilience4jCall(withNewKey(request));
  }

  /** Like for like: Failsafe's retry, breaker and bulkhead for the request's target. */
  int failsafeStackCall() throws IOException {
    return failsafeStackCall(request);
  }

  /** Like for like with the SDK's keyed POST: Failsafe's full stack and a new key per call. */
  int failsafeStackWithNewKeyCall() throws IOException {
    return failsafeStackCall(withNewKey(request));
  }

  /** Like for like: resilience4j's retry, breaker and bulkhead for the request's target. */
  int resilience4jStackCall() throws Throwable {
    return resilience4jStackCall(request);
  }

  /** Like for like with the SDK's keyed POST: resilience4j's full stack and a new key per call. */
  int resilience4jStackWithNewKeyCall() throws Throwable {
    return resilience4jStackCall(withNewKey(request));
  }

  /** The SDK's row of the like-for-like stacks: its defaults plus a bulkhead. */
  int sdkWithBulkheadCall() throws IOException {
    return consume(sdkWithBulkhead.operation(request).execute());
  }

  private int failsafeStackCall(Request r) throws IOException {
    FailsafeExecutor<Response> stack =
        failsafeStacks.computeIfAbsent(r.url().host(), host -> newFailsafeStack());
    return consume(FailsafeCall.with(stack).compose(okHttp.newCall(r)).execute());
  }

  private int resilience4jStackCall(Request r) throws Throwable {
    return resilience4jStackCall(okHttp, r);
  }

  /**
   * resilience4j's retry, breaker and bulkhead for the request's target, sending on {@code client}
   * (for {@code CallerOverhead}'s deadline table: a client with a call timeout).
   */
  int resilience4jStackCall(OkHttpClient client, Request r) throws Throwable {
    String target = r.url().host();
    CircuitBreaker breaker = r4jBreakers.circuitBreaker(target);
    io.github.resilience4j.bulkhead.Bulkhead bulkhead = r4jBulkheads.bulkhead(target);
    return consume(Retry.decorateCheckedSupplier(retry,
        CircuitBreaker.decorateCheckedSupplier(breaker,
            io.github.resilience4j.bulkhead.Bulkhead.decorateCheckedSupplier(bulkhead,
                () -> client.newCall(r).execute()))).get());
  }

  /**
   * Failsafe's stack for the request's target inside a {@code Timeout} of {@code timeout} that
   * bounds the whole execution, retries included, and cancels the OkHttp call when it fires: what
   * the SDK's deadline does (for {@code CallerOverhead}'s deadline table).
   */
  int failsafeStackWithTimeoutCall(FailsafeExecutor<Response> stackWithTimeout, Request r)
      throws IOException {
    return consume(FailsafeCall.with(stackWithTimeout).compose(okHttp.newCall(r)).execute());
  }

  /** {@link #newFailsafeStack()} inside a {@code Timeout} of {@code timeout}, outermost. */
  static FailsafeExecutor<Response> newFailsafeStackWithTimeout(Duration timeout) {
    return Failsafe.with(dev.failsafe.Timeout.<Response>of(timeout))
        .compose(failsafeRetryPolicy()).compose(failsafeBreaker()).compose(failsafeBulkhead());
  }

  private int failsafeCall(Request r) throws IOException {
    return consume(FailsafeCall.with(failsafe).compose(okHttp.newCall(r)).execute());
  }

  private int resilience4jCall(Request r) throws Throwable {
    return consume(Retry.decorateCheckedSupplier(retry, () -> okHttp.newCall(r).execute()).get());
  }

  /** Reads the whole body and closes the response, as a caller would. */
  static int consume(Response response) throws IOException {
    try (response) {
      if (response.code() != 200) {
        throw new IOException("unexpected status " + response.code());
      }
      return response.body().string().length();
    }
  }
}

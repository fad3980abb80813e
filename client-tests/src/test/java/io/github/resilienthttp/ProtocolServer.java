package io.github.resilienthttp;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.provider.Arguments;

/**
 * A MockWebServer speaking HTTP/1.1 or HTTP/2 (prior knowledge) on a loopback port, the OkHttp
 * client that talks to it, and the SDK clients the test builds on it, all closed together
 * ({@link #close()}, from the test's {@code @AfterEach}). For the tests that run each case on both
 * protocols. Test code only.
 */
final class ProtocolServer implements AutoCloseable {
  private static final MediaType JSON = MediaType.get("application/json");

  final MockWebServer server = new MockWebServer();
  final OkHttpClient okHttp;
  private final List<ResilientHttpClient> clients = new ArrayList<>();

  /** {@return the protocols every case runs on} */
  static List<Protocol> protocols() {
    return List.of(Protocol.HTTP_1_1, Protocol.H2_PRIOR_KNOWLEDGE);
  }

  /**
   * {@return each of {@code values} with each protocol, as parameterized-test arguments (value,
   * protocol), protocol by protocol}
   */
  static List<Arguments> withEachProtocol(Object... values) {
    List<Arguments> all = new ArrayList<>();
    for (Protocol p : protocols()) {
      for (Object v : values) {
        all.add(Arguments.of(v, p));
      }
    }
    return all;
  }

  /**
   * A server, not started yet (set its dispatcher first, if any, then {@link #start()}), and the
   * client for it.
   */
  ProtocolServer(Protocol protocol) {
    OkHttpClient.Builder b = new OkHttpClient.Builder();
    if (protocol == Protocol.H2_PRIOR_KNOWLEDGE) {
      server.setProtocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
      b.protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
    }
    okHttp = b.build();
  }

  /** A server speaking {@code protocol}, started. */
  static ProtocolServer started(Protocol protocol) throws IOException {
    return new ProtocolServer(protocol).start();
  }

  ProtocolServer start() throws IOException {
    server.start();
    return this;
  }

  /**
   * The SDK on this server as these tests use it: no budget or breaker in the way, 3 attempts, a
   * backoff of a minute (an operation that retries is waiting when the test looks), a 5 minute
   * deadline.
   */
  ResilientHttpClient.Builder builder() {
    return ResilientHttpClient.wrap(okHttp).retryBudget(RetryBudget.unlimited()).noCircuitBreaker()
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofSeconds(60))).deadline(Duration.ofMinutes(5)).build());
  }

  /** {@return {@code b} built, closed with this server} */
  ResilientHttpClient client(ResilientHttpClient.Builder b) {
    ResilientHttpClient c = b.build();
    clients.add(c);
    return c;
  }

  Request get() {
    return new Request.Builder().url(server.url("/orders/1")).build();
  }

  Request charge() {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"o-1\"}", JSON)).build();
  }

  /**
   * The failure {@code f} ends with, unwrapped; fails the test when it ends with a response or
   * not within 10 s.
   */
  static Throwable failureOf(CompletableFuture<Response> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS).close();
      throw new AssertionError("expected a failure");
    } catch (ExecutionException e) {
      return e.getCause() instanceof CompletionException c ? c.getCause() : e.getCause();
    }
  }

  /**
   * Waits until {@code client} has nothing left: no operation registered with its lifecycle, none
   * watched by its deadline watchdog. Within 3 s, checked at once and then every millisecond (an
   * async run leaves in its future's own completion stage, just after the caller saw it complete);
   * fails the test otherwise.
   */
  static void awaitNothingLeft(ResilientHttpClient client) {
    Awaitility.await().atMost(Duration.ofSeconds(3)).pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(1))
        .until(() -> client.runtime().lifecycle().runningCount() == 0
            && client.runtime().deadlineWatchdog().watchedCount() == 0);
  }

  @Override
  public void close() {
    clients.forEach(ResilientHttpClient::closeNow);
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }
}

package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.BulkheadFullException;
import io.github.resilienthttp.CircuitBreakerOpenException;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.LoopbackServer;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationFailure;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.RetriesExhaustedException;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryBudgetExhaustedException;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One rule for "may the server have acted" ({@link OperationFailure#mayHaveExecuted()}), per way
 * an operation ends, with {@code execute()} and {@code executeAsync()}, on real sockets: a lost
 * answer (the server read the request, then the socket closed) says yes whatever stops the
 * operation afterwards (the deadline, the budget, the breaker, the attempts, a permanent
 * classification); a refused connect (nothing sent) says no, for the same endings. The table is
 * the one in docs/exceptions.md.
 */
@Timeout(60)
class MayHaveExecutedTest {
  private static final MediaType JSON = MediaType.get("application/json");

  /** What the server does with every attempt. */
  enum Server {
    /** Reads the request, then closes the socket before answering: the answer is lost. */
    LOSES_ANSWER,
    /** Nothing listens: the connect is refused, nothing is sent. */
    REFUSES_CONNECT,
    /** Reads the request and answers after 5 s: the attempt is on the wire when it is stopped. */
    ANSWERS_LATE
  }

  enum Api { EXECUTE, EXECUTE_ASYNC }

  record Row(String ending, Server server, UnaryOperator<ResilientHttpClient.Builder> client,
      UnaryOperator<Operation> operation, Class<? extends Exception> type, String reason,
      boolean mayHaveExecuted) {
    @Override
    public String toString() {
      return ending + " after " + server;
    }
  }

  private static final ExecutorService callers = Executors.newCachedThreadPool();
  @RegisterExtension
  final LoopbackServer loopback = new LoopbackServer();
  private MockWebServer server;
  private OkHttpClient okHttp;

  static List<Row> rows() {
    UnaryOperator<Operation> same = op -> op;
    UnaryOperator<Operation> keyless = op -> op.sendIdempotencyKey(false);
    UnaryOperator<Operation> permanent = op -> op.classifier(outcome ->
        outcome.exception().isPresent() ? Decision.fail("always-permanent") : Decision.defer());
    UnaryOperator<ResilientHttpClient.Builder> waitsTooLong = b -> b.retryPolicy(policy()
        .backoff(Backoff.fixed(Duration.ofSeconds(30))).deadline(Duration.ofSeconds(2)).build());
    UnaryOperator<ResilientHttpClient.Builder> shortDeadline = b -> b.retryPolicy(policy()
        .deadline(Duration.ofMillis(300)).build());
    UnaryOperator<ResilientHttpClient.Builder> noBudget = b -> b.retryBudget(RetryBudget.none());
    UnaryOperator<ResilientHttpClient.Builder> oneStrike = b -> b.circuitBreaker(
        CircuitBreaker.of("one-strike", CircuitBreakerConfig.custom().slidingWindowSize(1)
            .minimumNumberOfCalls(1).failureRateThreshold(50)
            .waitDurationInOpenState(Duration.ofMinutes(1)).build()));
    UnaryOperator<ResilientHttpClient.Builder> defaults = b -> b;
    return List.of(
        new Row("deadline before the retry", Server.LOSES_ANSWER, waitsTooLong, same,
            DeadlineExceededException.class, "deadline", true),
        new Row("deadline before the retry", Server.REFUSES_CONNECT, waitsTooLong, same,
            DeadlineExceededException.class, "deadline", false),
        new Row("deadline during the attempt", Server.ANSWERS_LATE, shortDeadline, same,
            DeadlineExceededException.class, "deadline", true),
        new Row("retry budget", Server.LOSES_ANSWER, noBudget, same,
            OutcomeUnknownException.class, RetryBudgetExhaustedException.REASON, true),
        new Row("retry budget", Server.REFUSES_CONNECT, noBudget, same,
            RetryBudgetExhaustedException.class, RetryBudgetExhaustedException.REASON, false),
        new Row("circuit breaker", Server.LOSES_ANSWER, oneStrike, same,
            OutcomeUnknownException.class, "circuit-breaker-open", true),
        new Row("circuit breaker", Server.REFUSES_CONNECT, oneStrike, same,
            CircuitBreakerOpenException.class, "circuit-breaker-open", false),
        new Row("attempts exhausted", Server.LOSES_ANSWER, defaults, same,
            OutcomeUnknownException.class, "attempts-exhausted", true),
        new Row("attempts exhausted", Server.REFUSES_CONNECT, defaults, same,
            RetriesExhaustedException.class, "attempts-exhausted", false),
        new Row("not idempotent (no key sent)", Server.LOSES_ANSWER, defaults, keyless,
            OutcomeUnknownException.class, null, true),
        new Row("permanent", Server.LOSES_ANSWER, defaults, permanent,
            ResilientHttpException.class, "always-permanent", true),
        new Row("permanent", Server.REFUSES_CONNECT, defaults, permanent,
            ResilientHttpException.class, "always-permanent", false));
  }

  static Stream<Arguments> cases() {
    return rows().stream().flatMap(row -> Stream.of(Api.values()).map(api -> Arguments.of(row, api)));
  }

  @BeforeEach
  void start() {
    server = loopback.server();
    okHttp = loopback.okHttp();
  }

  @ParameterizedTest(name = "{0}, {1}")
  @MethodSource("cases")
  void everyEndingSaysWhetherTheServerMayHaveActed(Row row, Api api) throws Exception {
    ResilientHttpClient client = row.client().apply(ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker().retryBudget(RetryBudget.unlimited())
        .retryPolicy(policy().build())).build();
    Operation op = row.operation().apply(client.operation(keyedPost(url(row.server()))));

    Throwable failure = failureOf(api, op);

    assertThat(failure).isExactlyInstanceOf(row.type()).isInstanceOf(OperationFailure.class);
    OperationFailure f = (OperationFailure) failure;
    assertThat(f.mayHaveExecuted()).as("%s: mayHaveExecuted", failure).isEqualTo(row.mayHaveExecuted());
    assertThat(f.facts().mayHaveExecuted()).isEqualTo(row.mayHaveExecuted());
    if (row.reason() != null) {
      assertThat(f.reason()).isEqualTo(row.reason());
    }
    if (row.server() == Server.REFUSES_CONNECT) {
      assertThat(server.getRequestCount()).isZero();
    } else {
      assertThat(server.getRequestCount()).isPositive();
    }
  }

  @Test
  void aCancelOfAnAttemptOnTheWireSaysTheServerMayHaveActed() throws Exception {
    Operation op = client().operation(keyedPost(url(Server.ANSWERS_LATE)));
    CompletableFuture<Throwable> failure = CompletableFuture.supplyAsync(() -> failureOf(op), callers);
    server.takeRequest(); // the attempt is on the wire
    op.cancel();

    assertThat(failure.get(20, TimeUnit.SECONDS)).isInstanceOfSatisfying(ResilientHttpException.class,
        e -> {
          assertThat(e.reason()).isEqualTo("canceled");
          assertThat(e.mayHaveExecuted()).isTrue();
        });
  }

  @Test
  void aCancelBeforeAnythingWasSentSaysItDidNot() throws IOException {
    Operation op = client().operation(keyedPost(url(Server.ANSWERS_LATE)));
    op.cancel();

    assertThat(failureOf(op)).isInstanceOfSatisfying(ResilientHttpException.class, e -> {
      assertThat(e.reason()).isEqualTo("canceled");
      assertThat(e.mayHaveExecuted()).isFalse();
    });
    assertThat(server.getRequestCount()).isZero();
  }

  /** How a hedged {@code execute()} is stopped while its copies are on the wire. */
  enum HedgedStop { DEADLINE, CANCEL, INTERRUPT }

  @ParameterizedTest(name = "hedged, {0}")
  @org.junit.jupiter.params.provider.EnumSource(HedgedStop.class)
  void aHedgedRunStoppedWithCopiesOnTheWireSaysTheServerMayHaveActed(HedgedStop stop)
      throws Exception {
    for (int i = 0; i < 2; i++) { // the first copy and its hedge: both answer late
      server.enqueue(new MockResponse.Builder().code(200).headersDelay(5, TimeUnit.SECONDS).build());
    }
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(policy().deadline(stop == HedgedStop.DEADLINE ? Duration.ofMillis(500)
            : Duration.ofSeconds(20)).build())
        .hedging(io.github.resilienthttp.HedgingPolicy.builder().delay(Duration.ofMillis(50))
            .maxHedges(1).build())
        .build();
    Operation op = client.operation(new Request.Builder().url(server.url("/slow")).build());
    java.util.concurrent.atomic.AtomicReference<Thread> caller =
        new java.util.concurrent.atomic.AtomicReference<>();
    CompletableFuture<Throwable> failure = CompletableFuture.supplyAsync(() -> {
      caller.set(Thread.currentThread());
      return failureOf(op);
    }, callers);
    server.takeRequest(); // a copy is on the wire
    if (stop == HedgedStop.CANCEL) {
      op.cancel();
    } else if (stop == HedgedStop.INTERRUPT) {
      caller.get().interrupt();
    }

    Throwable f = failure.get(20, TimeUnit.SECONDS);
    assertThat(f).isInstanceOf(switch (stop) {
      case DEADLINE -> DeadlineExceededException.class;
      case CANCEL -> ResilientHttpException.class;
      case INTERRUPT -> io.github.resilienthttp.OperationInterruptedException.class;
    });
    assertThat(((OperationFailure) f).mayHaveExecuted()).as("%s", f).isTrue();
  }

  @Test
  void refusalsBeforeTheFirstAttemptAndTheOutcomeUnknownTypesAnswerByTheirKind() {
    OperationFailure.Facts facts = new OperationFailure.Facts("k", true, 0, "r");
    assertThat(facts.mayHaveExecuted()).isFalse();
    assertThat(new BulkheadFullException("k", true, 0, "b", Duration.ZERO, null).mayHaveExecuted())
        .isFalse();
    assertThat(new OutcomeUnknownException("m", "k", true, 1, "r", -1, null).mayHaveExecuted())
        .isTrue();
    assertThat(new DeadlineExceededException(new OperationFailure.Facts("k", true, 1, "deadline",
        true), "m", null).mayHaveExecuted()).isTrue();
  }

  private ResilientHttpClient client() {
    return ResilientHttpClient.wrap(okHttp).noCircuitBreaker().retryBudget(RetryBudget.unlimited())
        .retryPolicy(policy().build()).build();
  }

  private static RetryPolicy.Builder policy() {
    return RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
        .deadline(Duration.ofSeconds(20));
  }

  private HttpUrl url(Server behaviour) throws IOException {
    switch (behaviour) {
      case LOSES_ANSWER:
        for (int i = 0; i < 3; i++) {
          server.enqueue(new MockResponse.Builder()
              .onResponseStart(new SocketEffect.CloseSocket()).build());
        }
        return server.url("/charge");
      case ANSWERS_LATE:
        server.enqueue(new MockResponse.Builder().code(201)
            .headersDelay(5, TimeUnit.SECONDS).build());
        return server.url("/charge");
      default:
        try (ServerSocket closed = new ServerSocket(0)) {
          return server.url("/charge").newBuilder().port(closed.getLocalPort()).build();
        }
    }
  }

  private static Request keyedPost(HttpUrl url) {
    return new Request.Builder().url(url).post(RequestBody.create("{\"amount\":1}", JSON)).build();
  }

  private static Throwable failureOf(Api api, Operation op) throws InterruptedException {
    if (api == Api.EXECUTE) {
      return failureOf(op);
    }
    try (Response r = op.executeAsync().get(30, TimeUnit.SECONDS)) {
      throw new AssertionError("returned " + r.code());
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("no end within 30 s", e);
    }
  }

  private static Throwable failureOf(Operation op) {
    try (Response r = op.execute()) {
      throw new AssertionError("returned " + r.code());
    } catch (IOException e) {
      return e;
    }
  }
}

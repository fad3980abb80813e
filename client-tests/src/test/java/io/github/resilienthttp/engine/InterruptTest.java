package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationInterruptedException;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A calling thread interrupted while its request is at the server: an interrupt is a request to stop
 * waiting, not a failure of the request that is already being processed. The caller gets the answer
 * that arrives (interrupt flag still set), and never a misleading "not done" for a request that may
 * have been done.
 */
@Timeout(20)
class InterruptTest {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final long HOLD_MILLIS = 300;
  private static final long INTERRUPT_AT_MILLIS = 100;

  private final AtomicInteger requests = new AtomicInteger();
  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void startServer() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        requests.incrementAndGet();
        Thread.sleep(HOLD_MILLIS); // the server is handling it
        return switch (request.getUrl().encodedPath()) {
          case "/created" -> new MockResponse.Builder().code(201).body("{\"id\":1}").build();
          case "/busy" -> new MockResponse.Builder().code(503).body("busy").build();
          case "/drop" -> new MockResponse.Builder().code(201)
              .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build();
          default -> new MockResponse.Builder().code(404).build();
        };
      }
    });
    server.start();
    okHttp = new OkHttpClient();
  }

  @AfterEach
  void stop() {
    okHttp.dispatcher().cancelAll();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client() {
    return ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(50)))
            .deadline(Duration.ofSeconds(10)).build())
        .build();
  }

  private Request post(String path) {
    return new Request.Builder().url(server.url(path))
        .post(RequestBody.create("{\"amount\":1}", JSON)).build();
  }

  /** What the interrupted caller saw. */
  private record Seen(int status, IOException failure, boolean stillInterrupted) {}

  /** Runs {@code op.execute()} on a new thread, interrupted {@link #INTERRUPT_AT_MILLIS} in. */
  private static Seen runInterrupted(Operation op) throws Exception {
    CompletableFuture<Seen> seen = new CompletableFuture<>();
    Thread caller = new Thread(() -> {
      try (Response r = op.execute()) {
        // Not reading the body: with the interrupt flag kept, Okio refuses socket reads
        // (InterruptedIOException) until the caller clears it. The status is what execute() gave.
        seen.complete(new Seen(r.code(), null, Thread.currentThread().isInterrupted()));
      } catch (IOException e) {
        seen.complete(new Seen(-1, e, Thread.currentThread().isInterrupted()));
      } catch (Throwable t) {
        seen.completeExceptionally(t);
      }
    }, "interrupted-caller");
    caller.setDaemon(true);
    caller.start();
    Thread.sleep(INTERRUPT_AT_MILLIS);
    caller.interrupt();
    return seen.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aKeyedPostInterruptedWhileTheServerHandlesItReturnsTheServersAnswer() throws Exception {
    Operation op = client().operation(post("/created"));
    assertThat(op.idempotencyKeySent()).isTrue();

    Seen seen = runInterrupted(op);

    assertThat(seen.failure()).as("the caller's exception").isNull();
    assertThat(seen.status()).isEqualTo(201);
    assertThat(seen.stillInterrupted()).as("interrupt flag after execute() returned").isTrue();
    assertThat(requests.get()).isEqualTo(1);
  }

  @Test
  void aKeylessPostInterruptedWhenTheConnectionDropsAfterTheRequestEndsInOutcomeUnknown()
      throws Exception {
    Operation op = client().operation(post("/drop")).sendIdempotencyKey(false);

    Seen seen = runInterrupted(op);

    assertThat(seen.failure()).as("the server may have processed it").isNotNull();
    assertThat(carriesOutcomeUnknown(seen.failure()))
        .as("%s is or carries OutcomeUnknownException", seen.failure()).isTrue();
    assertThat(seen.stillInterrupted()).as("interrupt flag after execute() threw").isTrue();
    assertThat(requests.get()).as("a non-idempotent POST is sent once").isEqualTo(1);
  }

  @Test
  void anInterruptedOperationWhoseAnswerIsRetryableStopsWithoutARetry() throws Exception {
    Operation op = client().operation(post("/busy"));

    Seen seen = runInterrupted(op);

    // 503 means "not processed": stopping (interrupted, or with the 503) is the truthful answer.
    if (seen.failure() == null) {
      assertThat(seen.status()).isEqualTo(503);
    } else {
      assertThat(seen.failure()).isInstanceOf(OperationInterruptedException.class);
    }
    assertThat(seen.stillInterrupted()).isTrue();
    Thread.sleep(200);
    assertThat(requests.get()).as("no retry after the interrupt").isEqualTo(1);
  }

  private static boolean carriesOutcomeUnknown(Throwable t) {
    List<Throwable> all = new ArrayList<>();
    all.add(t);
    if (t.getCause() != null) {
      all.add(t.getCause());
    }
    all.addAll(List.of(t.getSuppressed()));
    return all.stream().anyMatch(OutcomeUnknownException.class::isInstance);
  }
}

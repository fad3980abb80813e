package io.github.resilienthttp.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.DeadlineExceededException;
import io.github.resilienthttp.OperationOptions;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryBudget;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The deadline is what ends an operation that runs out of time, on every path: never an attempt
 * timeout that fires a hair earlier, and never a body read that outlives it.
 */
@Timeout(30)
class DeadlineTest {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final int RUNS = 40;
  private static final String BODY = "0123456789012345678901234567890123456789"; // 40 bytes

  private MockWebServer server;
  private OkHttpClient okHttp;

  @BeforeEach
  void startServer() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return switch (request.getUrl().encodedPath()) {
          case "/warm" -> new MockResponse.Builder().code(200).body("warm").build();
          case "/never" -> new MockResponse.Builder().code(201)
              .headersDelay(5, TimeUnit.SECONDS).build();
          case "/trickle" -> new MockResponse.Builder().code(200).body(BODY)
              .throttleBody(1, 100, TimeUnit.MILLISECONDS).build();
          default -> new MockResponse.Builder().code(404).build();
        };
      }
    });
    server.start();
    okHttp = new OkHttpClient(); // 10 s read timeout: longer than every deadline here
  }

  @AfterEach
  void stop() {
    okHttp.dispatcher().cancelAll();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private ResilientHttpClient client(int maxAttempts, Duration deadline) {
    return ResilientHttpClient.wrap(okHttp)
        .noCircuitBreaker()
        .retryBudget(RetryBudget.unlimited())
        .retryPolicy(RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.none())
            .deadline(deadline).build())
        .build();
  }

  @ParameterizedTest(name = "maxAttempts {0}")
  @ValueSource(ints = {1, 3})
  void aKeyedPostThatIsNeverAnsweredAlwaysEndsInDeadlineExceeded(int maxAttempts) throws Exception {
    ResilientHttpClient client = client(maxAttempts, Duration.ofMillis(200));
    List<String> wrong = new ArrayList<>();
    for (int run = 0; run < RUNS; run++) {
      // The warm-up has a deadline of its own: on a loaded machine it may take longer than 200 ms.
      try (Response warm = client.operation(new Request.Builder().url(server.url("/warm")).build())
          .deadline(Duration.ofSeconds(10)).execute()) {
        assertThat(warm.body().string()).isEqualTo("warm");
      }
      Request post = new Request.Builder().url(server.url("/never"))
          .post(RequestBody.create("{\"run\":" + run + "}", JSON)).build();
      try (Response r = client.operation(post).execute()) {
        wrong.add("run " + run + ": returned " + r.code());
      } catch (DeadlineExceededException expected) {
        // the deadline ended it
      } catch (IOException e) {
        wrong.add("run " + run + ": " + e);
      }
    }
    assertThat(wrong).as("runs of %d that did not end in DeadlineExceededException", RUNS).isEmpty();
  }

  @Test
  void thePlainCallsDeadlineBoundsReadingATrickledBody() throws Exception {
    ResilientHttpClient client = client(3, Duration.ofSeconds(30));
    Request request = new Request.Builder().url(server.url("/trickle"))
        .tag(OperationOptions.class, OperationOptions.builder().deadline(Duration.ofMillis(500)).build())
        .build();
    long start = System.nanoTime();
    String read = readAll(() -> client.okHttpClient().newCall(request).execute());
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(read).as("reading a 40-byte body at 1 byte per 100 ms").startsWith("failed");
    assertThat(took).as("a plain call with a 500 ms deadline (%s)", read)
        .isLessThan(Duration.ofMillis(1500));
  }

  @Test
  void theOperationsDeadlineBoundsReadingATrickledBody() throws Exception {
    ResilientHttpClient client = client(3, Duration.ofSeconds(30));
    Request request = new Request.Builder().url(server.url("/trickle")).build();
    long start = System.nanoTime();
    String read = readAll(() -> client.operation(request).deadline(Duration.ofMillis(500)).execute());
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(read).as("reading a 40-byte body at 1 byte per 100 ms").startsWith("failed");
    assertThat(took).as("an operation with a 500 ms deadline (%s)", read)
        .isLessThan(Duration.ofMillis(1500));
  }

  private interface Send {
    Response send() throws IOException;
  }

  private static String readAll(Send send) {
    try (Response r = send.send()) {
      return "read " + r.body().string().length() + " bytes";
    } catch (IOException e) {
      return "failed: " + e;
    }
  }
}

package io.github.resilienthttp.examples;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationResult;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.testkit.NoDelayServerSocketFactory;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Hedged GETs against a catalogue service with a slow tail: every 20th request takes 300 ms, the
 * others answer at once. The same 200 GETs run without hedging and with a hedge after 20 ms; the
 * program prints p50, p95, p99 and max latency, the server's requests per GET, and how many answers
 * came from a hedge. Exit code 0 when hedging cut p99 at least in half and cost at most 1.2 server
 * requests per GET. Needs no network: the server is a MockWebServer on 127.0.0.1.
 *
 * <pre>
 * java -cp examples/target/resilient-http-demo.jar io.github.resilienthttp.examples.HedgingExample
 * </pre>
 */
public final class HedgingExample {
  static final int GETS = 200;
  static final int SLOW_EVERY = 20;
  static final long SLOW_MS = 300;

  private HedgingExample() {}

  public static void main(String[] args) throws Exception {
    System.exit(run() ? 0 : 1);
  }

  /** Runs both passes, prints the table; true when hedging met its bar. */
  static boolean run() throws IOException {
    AtomicInteger requests = new AtomicInteger();
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          int n = requests.incrementAndGet();
          MockResponse.Builder answer = new MockResponse.Builder().body("{\"sku\":\"book-1\"}");
          if (n % SLOW_EVERY == 0) {
            answer.headersDelay(SLOW_MS, TimeUnit.MILLISECONDS);
          }
          return answer.build();
        }
      });
      // TCP_NODELAY: without it each answer's body waits ~40 ms for the client's delayed ACK.
      server.setServerSocketFactory(new NoDelayServerSocketFactory());
      server.start();
      Request get = new Request.Builder().url(server.url("/catalogue/book-1")).build();
      OkHttpClient okHttp = new OkHttpClient();

      System.out.printf("%d GETs; every %dth request takes %d ms, the rest answer at once%n%n",
          GETS, SLOW_EVERY, SLOW_MS);
      System.out.println("| client | p50 ms | p95 ms | p99 ms | max ms | server requests / GET | won by a hedge |");
      System.out.println("|---|---:|---:|---:|---:|---:|---:|");
      Pass plain = pass("SDK, no hedging", ResilientHttpClient.wrap(okHttp).build(), get, requests);
      Pass hedged = pass("SDK, hedge after 20 ms", ResilientHttpClient.wrap(okHttp)
          .hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(20))).build(), get, requests);
      okHttp.connectionPool().evictAll();
      boolean ok = hedged.p99Ms * 2 <= plain.p99Ms && hedged.requestsPerGet <= 1.2;
      System.out.printf("%nhedging %s: p99 %.0f -> %.0f ms for %.2f server requests per GET%n",
          ok ? "paid off" : "did NOT pay off", plain.p99Ms, hedged.p99Ms, hedged.requestsPerGet);
      return ok;
    }
  }

  record Pass(double p99Ms, double requestsPerGet) {}

  private static Pass pass(String name, ResilientHttpClient sdk, Request get, AtomicInteger requests)
      throws IOException {
    AtomicInteger wonByHedge = new AtomicInteger();
    ResilientHttpClient client = sdk.newBuilder().addListener(new OperationListener() {
      @Override
      public void operationEnded(OperationInfo operation, OperationResult result) {
        if (result.winningKind().orElse(null) == AttemptKind.HEDGE) {
          wonByHedge.incrementAndGet();
        }
      }
    }).build();
    int before = requests.get();
    long[] nanos = new long[GETS];
    for (int i = 0; i < GETS; i++) {
      long start = System.nanoTime();
      try (Response r = client.operation(get).execute()) {
        r.body().string();
      }
      nanos[i] = System.nanoTime() - start;
    }
    Arrays.sort(nanos);
    double perGet = (double) (requests.get() - before) / GETS;
    double p99 = ms(nanos, 0.99);
    System.out.printf("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %d |%n", name, ms(nanos, 0.50),
        ms(nanos, 0.95), p99, nanos[GETS - 1] / 1e6, perGet, wonByHedge.get());
    return new Pass(p99, perGet);
  }

  private static double ms(long[] sorted, double q) {
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, rank - 1)] / 1e6;
  }
}

package io.github.resilienthttp.bench;

import com.sun.net.httpserver.HttpServer;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Hedging against a slow tail, side by side in one JVM and one run: a loopback server answers
 * {@code slowShare} of requests after {@code slowMs} and the rest after {@code fastMs} (a seeded
 * draw per request), and each caller runs the same number of sequential GETs. Callers: raw OkHttp,
 * the SDK without hedging, the SDK with a fixed hedging delay, the SDK with a p95 delay, and a
 * hand-written hedge (two {@code enqueue}s after the same delay, first answer wins, the other
 * cancelled). Prints p50 / p99 / p99.9 latency, server requests per operation, and whether the
 * connection pool is clean (every connection idle) afterwards.
 *
 * <p>Then an outage: every request answered 503 for {@code outageOps} operations, with and without
 * hedging, to show that hedges do not raise amplification above the retry budget's bound.
 *
 * <pre>
 * java -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.HedgingLatency \
 *     [ops=3000] [slowShare=0.02] [slowMs=100] [fastMs=1] [seed=42]
 * </pre>
 *
 * Benchmark code: it sleeps on the server's threads to model service time.
 */
public final class HedgingLatency {
  private HedgingLatency() {}

  public static void main(String[] args) throws Exception {
    int ops = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
    double slowShare = args.length > 1 ? Double.parseDouble(args[1]) : 0.02;
    int slowMs = args.length > 2 ? Integer.parseInt(args[2]) : 100;
    int fastMs = args.length > 3 ? Integer.parseInt(args[3]) : 1;
    long seed = args.length > 4 ? Long.parseLong(args[4]) : 42;
    SlowTailServer server = new SlowTailServer(slowShare, slowMs, fastMs, seed);
    try {
      System.out.printf("slow tail: %.1f %% of requests take %d ms, the rest %d ms; %d GETs per"
          + " caller, sequential; seed %d%n%n", slowShare * 100, slowMs, fastMs, ops, seed);
      System.out.println("| caller | p50 ms | p99 ms | p99.9 ms | max ms | server requests / op |"
          + " pool clean |");
      System.out.println("|---|---:|---:|---:|---:|---:|---|");
      Request get = new Request.Builder().url("http://127.0.0.1:" + server.port() + "/item").build();
      long delayMs = Math.max(2, fastMs * 5L);
      run("OkHttp `newCall().execute()`", server, ops, okHttp -> () -> {
        try (Response r = okHttp.newCall(get).execute()) {
          r.body().string();
        }
      });
      run("SDK, no hedging", server, ops, okHttp -> {
        ResilientHttpClient sdk = sdk(okHttp, null);
        return () -> {
          try (Response r = sdk.operation(get).execute()) {
            r.body().string();
          }
        };
      });
      run("SDK, hedge after " + delayMs + " ms", server, ops, okHttp -> {
        ResilientHttpClient sdk = sdk(okHttp, HedgingPolicy.fixedDelay(Duration.ofMillis(delayMs)));
        return () -> {
          try (Response r = sdk.operation(get).execute()) {
            r.body().string();
          }
        };
      });
      run("SDK, hedge after p95 (2..50 ms)", server, ops, okHttp -> {
        ResilientHttpClient sdk = sdk(okHttp, HedgingPolicy.builder()
            .percentileDelay(95, Duration.ofMillis(2), Duration.ofMillis(50)).build());
        return () -> {
          try (Response r = sdk.operation(get).execute()) {
            r.body().string();
          }
        };
      });
      run("hand-written hedge after " + delayMs + " ms (two enqueues)", server, ops,
          okHttp -> () -> handWrittenHedge(okHttp, get, delayMs));
      outage(server, Math.min(ops, 1000), get);
    } finally {
      server.close();
    }
  }

  private static ResilientHttpClient sdk(OkHttpClient okHttp, HedgingPolicy hedging) {
    return sdk(okHttp, hedging, true);
  }

  private static ResilientHttpClient sdk(OkHttpClient okHttp, HedgingPolicy hedging,
      boolean breaker) {
    ResilientHttpClient.Builder b = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(10), Duration.ofMillis(100)))
            .deadline(Duration.ofSeconds(10)).build());
    if (hedging != null) {
      b.hedging(hedging);
    }
    if (!breaker) {
      b.noCircuitBreaker();
    }
    return b.build();
  }

  /** The user's alternative: two calls, the second after the delay, the first answer wins. */
  private static void handWrittenHedge(OkHttpClient okHttp, Request get, long delayMs)
      throws Exception {
    CompletableFuture<Response> winner = new CompletableFuture<>();
    AtomicBoolean done = new AtomicBoolean();
    Call[] won = new Call[1];
    Call first = okHttp.newCall(get);
    Call[] second = new Call[1];
    Callback callback = new Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        if (call == first && second[0] == null) {
          winner.completeExceptionally(e);
        }
      }

      @Override
      public void onResponse(Call call, Response response) {
        if (done.compareAndSet(false, true)) {
          won[0] = call;
          winner.complete(response);
        } else {
          response.close();
        }
      }
    };
    first.enqueue(callback);
    Response r;
    try {
      r = winner.get(delayMs, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      second[0] = okHttp.newCall(get);
      second[0].enqueue(callback);
      r = winner.get(10, TimeUnit.SECONDS);
    }
    // Cancel the loser only: cancelling the winner would cut its body.
    if (second[0] != null) {
      (won[0] == first ? second[0] : first).cancel();
    }
    try (Response response = r) {
      response.body().string();
    }
  }

  interface Op {
    void run() throws Exception;
  }

  interface Caller {
    Op make(OkHttpClient okHttp) throws Exception;
  }

  private static void run(String name, SlowTailServer server, int ops, Caller caller)
      throws Exception {
    OkHttpClient okHttp = new OkHttpClient.Builder().connectionPool(new ConnectionPool())
        .dispatcher(new Dispatcher()).build();
    Op op = caller.make(okHttp);
    for (int i = 0; i < Math.min(200, ops / 10); i++) {
      op.run(); // warm-up: JIT, connections, and the p95 caller's latency samples
    }
    long requestsBefore = server.requests();
    long[] nanos = new long[ops];
    for (int i = 0; i < ops; i++) {
      long start = System.nanoTime();
      op.run();
      nanos[i] = System.nanoTime() - start;
    }
    double perOp = (double) (server.requests() - requestsBefore) / ops;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (okHttp.connectionPool().connectionCount() != okHttp.connectionPool().idleConnectionCount()
        && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    boolean clean = okHttp.connectionPool().connectionCount()
        == okHttp.connectionPool().idleConnectionCount();
    Arrays.sort(nanos);
    System.out.printf("| %s | %.1f | %.1f | %.1f | %.1f | %.3f | %s |%n", name, ms(nanos, 0.50),
        ms(nanos, 0.99), ms(nanos, 0.999), nanos[ops - 1] / 1e6, perOp, clean ? "yes" : "NO");
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  private static double ms(long[] sorted, double q) {
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e6;
  }

  /** Every request 503: server requests per operation, with and without hedges. */
  private static void outage(SlowTailServer server, int ops, Request get) throws Exception {
    server.outage(true);
    try {
      System.out.printf("%nTotal outage (every request 503, %d operations, default retry budget:"
          + " 10 %% of traffic plus 3 retries/s, 30 tokens)%n%n", ops);
      System.out.println("| caller | server requests / op |");
      System.out.println("|---|---:|");
      for (int row = 0; row < 4; row++) {
        boolean hedged = row % 2 == 1;
        boolean breaker = row < 2;
        OkHttpClient okHttp = new OkHttpClient();
        ResilientHttpClient sdk = sdk(okHttp, hedged
            ? HedgingPolicy.builder().delay(Duration.ofMillis(2)).maxHedges(2).build() : null,
            breaker);
        long before = server.requests();
        for (int i = 0; i < ops; i++) {
          try (Response r = sdk.operation(get).execute()) {
            r.body().string();
          } catch (IOException e) {
            // an exhausted budget ends some operations with an exception: counted all the same
          }
        }
        System.out.printf("| SDK, %s, %s | %.3f |%n", hedged ? "2 hedges after 2 ms" : "no hedging",
            breaker ? "default breaker" : "no breaker (the budget alone)",
            (double) (server.requests() - before) / ops);
        okHttp.connectionPool().evictAll();
        okHttp.dispatcher().executorService().shutdown();
      }
    } finally {
      server.outage(false);
    }
  }

  /** A JDK HttpServer on loopback whose service time has a seeded slow tail. */
  static final class SlowTailServer implements AutoCloseable {
    private final HttpServer http;
    private final ExecutorService executor = Executors.newFixedThreadPool(64);
    private final AtomicLong requests = new AtomicLong();
    private final SplittableRandom random;
    private volatile boolean outage;

    SlowTailServer(double slowShare, int slowMs, int fastMs, long seed) throws IOException {
      // Without TCP_NODELAY the JDK server's two writes (headers, body) meet the client's delayed
      // ACK: every answer would take about 40 ms.
      System.setProperty("sun.net.httpserver.nodelay", "true");
      random = new SplittableRandom(seed);
      http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
      http.setExecutor(executor);
      byte[] body = "{\"id\":\"item_1\"}".getBytes(StandardCharsets.US_ASCII);
      http.createContext("/", exchange -> {
        requests.incrementAndGet();
        boolean slow;
        synchronized (random) {
          slow = random.nextDouble() < slowShare;
        }
        try {
          Thread.sleep(slow ? slowMs : fastMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        exchange.getRequestBody().readAllBytes();
        int code = outage ? 503 : 200;
        exchange.sendResponseHeaders(code, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        } catch (IOException e) {
          // the client cancelled a hedge's loser
        }
        exchange.close();
      });
      http.start();
    }

    int port() {
      return http.getAddress().getPort();
    }

    long requests() {
      return requests.get();
    }

    void outage(boolean on) {
      outage = on;
    }

    @Override
    public void close() {
      http.stop(0);
      executor.shutdownNow();
    }
  }
}

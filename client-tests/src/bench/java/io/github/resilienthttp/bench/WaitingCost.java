package io.github.resilienthttp.bench;

import io.github.resilienthttp.AsyncOperationPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * What waiting costs: N operations of {@code executeAsync()} waiting in backoff (the server answered 429, not a breaker failure, and asked
 * for a {@code Retry-After} of a minute), then N {@code awaitCompletionAsync()} jobs waiting between
 * polls. For each: the threads the JVM has beyond those before (target: fewer than 20 for 10,000
 * waiting operations) and the heap per waiting operation (used heap after a full GC while they
 * wait, minus before, over N; target at most 2 KiB). Every wait is cancelled at the end, through
 * the futures the SDK returned.
 *
 * <pre>
 * java -Xmx2g -cp client-tests/target/benchmarks.jar io.github.resilienthttp.bench.WaitingCost [operations]
 * </pre>
 */
public final class WaitingCost {
  private WaitingCost() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    System.out.printf(Locale.ROOT, "Waiting cost: %d operations waiting at once%n%n", n);
    System.out.println("| what waits | threads before | threads while waiting | extra threads"
        + " | heap per waiting operation |");
    System.out.println("|---|---:|---:|---:|---:|");
    backoff(n);
    polls(n);
  }

  /** {@code executeAsync()} operations between their first attempt (a 429) and their retry. */
  private static void backoff(int n) throws Exception {
    String limited = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 60\r\nContent-Length: 0\r\n\r\n";
    try (LoopbackHttpServer server = LoopbackHttpServer.answering(limited, OK)) {
      OkHttpClient okHttp = okHttp();
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
          .retryPolicy(RetryPolicy.builder().maxAttempts(2).deadline(Duration.ofMinutes(5))
              .maxRetryAfter(Duration.ofMinutes(2)).build())
          .retryBudget(io.github.resilienthttp.RetryBudget.unlimited()) // every one of them retries
          .build();
      Request request = new Request.Builder().url(server.url("/payments"))
          .post(RequestBody.create("{}", MediaType.get("application/json"))).build();
      warmUp(client, server, n);
      Baseline before = Baseline.take();
      long sent = server.requestCount();
      List<CompletableFuture<Response>> waiting = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        waiting.add(client.operation(request).executeAsync());
      }
      awaitTrue(() -> server.requestCount() - sent >= n && okHttp.dispatcher().runningCallsCount() == 0,
          () -> "answered " + (server.requestCount() - sent), 120);
      report("`executeAsync()` in backoff (429, `Retry-After: 60`)", before, n, waiting);
      waiting.forEach(f -> f.cancel(true));
      shutDown(okHttp);
    }
  }

  /** {@code awaitCompletionAsync()} jobs between polls (a job that never ends, polls a minute apart). */
  private static void polls(int n) throws Exception {
    String accepted = "HTTP/1.1 202 Accepted\r\nLocation: /jobs/1\r\nRetry-After: 60\r\n"
        + "Content-Length: 0\r\n\r\n";
    try (LoopbackHttpServer server = LoopbackHttpServer.answering(accepted, OK)) {
      OkHttpClient okHttp = okHttp();
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).build();
      AsyncOperationPolicy policy = AsyncOperationPolicy.builder()
          .minPollInterval(Duration.ofSeconds(60)).maxPollInterval(Duration.ofSeconds(60))
          .deadline(Duration.ofMinutes(30)).build();
      Request submit = new Request.Builder().url(server.url("/jobs"))
          .post(RequestBody.create("{}", MediaType.get("application/json"))).build();
      warmUp(client, server, n);
      Baseline before = Baseline.take();
      long sent = server.requestCount();
      List<CompletableFuture<Response>> waiting = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        waiting.add(client.operation(submit).awaitCompletionAsync(policy));
      }
      awaitTrue(() -> server.requestCount() - sent >= n && okHttp.dispatcher().runningCallsCount() == 0,
          () -> "submits answered " + (server.requestCount() - sent), 180);
      report("`awaitCompletionAsync()` between polls (`Retry-After: 60`)", before, n, waiting);
      waiting.forEach(f -> f.cancel(true));
      shutDown(okHttp);
    }
  }

  private static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

  /**
   * Runs as many GETs as will wait later, to completion, so that the baseline holds the threads and
   * connections that sending them needs (OkHttp keeps idle dispatcher threads for a minute).
   */
  private static void warmUp(ResilientHttpClient client, LoopbackHttpServer server, int n)
      throws Exception {
    Request get = new Request.Builder().url(server.url("/warm")).build();
    List<CompletableFuture<Response>> warm = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      warm.add(client.operation(get).executeAsync());
    }
    for (CompletableFuture<Response> f : warm) {
      f.get(120, TimeUnit.SECONDS).close();
    }
  }

  private static OkHttpClient okHttp() {
    okhttp3.Dispatcher dispatcher = new okhttp3.Dispatcher();
    dispatcher.setMaxRequests(64);
    dispatcher.setMaxRequestsPerHost(64);
    return new OkHttpClient.Builder().dispatcher(dispatcher).build();
  }

  private static void shutDown(OkHttpClient okHttp) {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
  }

  private static void awaitTrue(BooleanSupplier condition, java.util.function.Supplier<String> progress,
      int seconds) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new IllegalStateException("not reached in " + seconds + " s: " + progress.get());
      }
      TimeUnit.MILLISECONDS.sleep(50);
    }
    TimeUnit.MILLISECONDS.sleep(500); // idle dispatcher threads linger; let the count settle
  }

  private static void report(String what, Baseline before, int n,
      List<CompletableFuture<Response>> waiting) throws InterruptedException {
    Baseline during = Baseline.take();
    long ended = waiting.stream().filter(CompletableFuture::isDone).count();
    if (ended > 0) {
      throw new IllegalStateException(ended + " operations ended instead of waiting");
    }
    System.out.printf(Locale.ROOT, "| %s | %d | %d | %+d | %.0f B |%n", what, before.threads,
        during.threads, during.threads - before.threads,
        (during.usedHeap - before.usedHeap) / (double) n);
  }

  /** Live threads and used heap after a full collection. */
  private record Baseline(int threads, long usedHeap) {
    static Baseline take() throws InterruptedException {
      MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
      for (int i = 0; i < 3; i++) {
        System.gc();
        TimeUnit.MILLISECONDS.sleep(100);
      }
      return new Baseline(ManagementFactory.getThreadMXBean().getThreadCount(),
          memory.getHeapMemoryUsage().getUsed());
    }
  }
}

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
 * waiting operations), of which the client side's (the SDK's and OkHttp's: every thread but the
 * benchmark's loopback server's, which runs one per connection and varies with how many
 * connections the burst opened), and the heap per waiting operation (used heap after a full GC while they
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
        + " | of which client side | heap per waiting operation |");
    System.out.println("|---|---:|---:|---:|---:|---:|");
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
  private static final long IDLE_THREAD_SECONDS = 1;

  /**
   * Runs as many GETs as will wait later, to completion, so that the baseline holds the connections
   * that sending them needs, and the SDK's scheduler thread.
   */
  /** Lets the dispatcher threads a burst left idle end (they live {@value #IDLE_THREAD_SECONDS} s). */
  private static void settle() throws InterruptedException {
    TimeUnit.SECONDS.sleep(IDLE_THREAD_SECONDS * 3);
  }

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
    settle();
  }

  /**
   * The wrapped client: 64 calls at once, on a dispatcher whose idle threads end after a second
   * (OkHttp's own keep them a minute), so that the threads counted while the operations wait are
   * the ones the waits hold, not those a burst of sends left idle.
   */
  private static OkHttpClient okHttp() {
    java.util.concurrent.ThreadPoolExecutor executor = new java.util.concurrent.ThreadPoolExecutor(
        0, Integer.MAX_VALUE, IDLE_THREAD_SECONDS, TimeUnit.SECONDS,
        new java.util.concurrent.SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "OkHttp Dispatcher");
          t.setDaemon(true);
          return t;
        });
    okhttp3.Dispatcher dispatcher = new okhttp3.Dispatcher(executor);
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
    settle();
  }

  private static void report(String what, Baseline before, int n,
      List<CompletableFuture<Response>> waiting) throws InterruptedException {
    Baseline during = Baseline.take();
    long ended = waiting.stream().filter(CompletableFuture::isDone).count();
    if (ended > 0) {
      throw new IllegalStateException(ended + " operations ended instead of waiting");
    }
    System.out.printf(Locale.ROOT, "| %s | %d | %d | %+d | %+d | %.0f B |%n", what, before.threads,
        during.threads, during.threads - before.threads,
        during.clientThreads - before.clientThreads,
        (during.usedHeap - before.usedHeap) / (double) n);
  }

  /**
   * Live threads, those of the client side (all but the benchmark's loopback server, which runs a
   * thread per connection), and used heap after a full collection.
   */
  private record Baseline(int threads, int clientThreads, long usedHeap) {
    static Baseline take() throws InterruptedException {
      MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
      for (int i = 0; i < 3; i++) {
        System.gc();
        TimeUnit.MILLISECONDS.sleep(100);
      }
      int client = 0;
      java.util.Map<String, Integer> names = new java.util.TreeMap<>();
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (!t.getName().startsWith("loopback-http")) {
          client++;
        }
        names.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
      }
      if (Boolean.getBoolean("bench.threads")) {
        System.out.println(names);
      }
      return new Baseline(ManagementFactory.getThreadMXBean().getThreadCount(), client,
          memory.getHeapMemoryUsage().getUsed());
    }
  }
}

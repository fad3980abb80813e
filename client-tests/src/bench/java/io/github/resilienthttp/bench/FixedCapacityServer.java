package io.github.resilienthttp.bench;

import java.io.Closeable;
import io.github.resilienthttp.testkit.NoDelayServerSocketFactory;
import java.io.IOException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.HttpUrl;

/**
 * A backend of fixed capacity on the loopback interface (MockWebServer 3, HTTP/1.1, accepted
 * connections with {@code TCP_NODELAY}): {@code workers}
 * requests are served at a time, each one holding its worker for {@code workers / capacity} seconds,
 * so the server completes at most {@code capacity} requests per second. A request that finds every
 * worker busy waits in a first-come-first-served queue of at most {@code queueLimit} requests (a fair
 * {@link Semaphore}); a request that finds the queue full is answered at once with
 * {@code 503 Service Unavailable}, {@code Retry-After: 1} and {@code RateLimit: "overload";r=0;t=1},
 * without doing any work. Overload thus
 * looks as it does at a real backend: first latency (up to {@code queueLimit / capacity} seconds of
 * queueing), then fast rejections.
 *
 * <p>Every served request is answered {@code 200} with a small JSON body. The server counts, per
 * operation, the requests it received and the ones it served: an operation is named by the
 * {@value #OP_HEADER} header its caller sets (the benchmark's index of the operation), so that the
 * count is exact whatever key, if any, the client sends. Benchmark code only; thread-safe.
 */
final class FixedCapacityServer implements Closeable {
  /** The request header naming the benchmark's operation index. */
  static final String OP_HEADER = "X-Bench-Op";

  private final MockWebServer server = new MockWebServer();
  private final int capacity;
  private final int workers;
  private final int queueLimit;
  private final long serviceNanos;
  private final Semaphore workerPermits;
  /** Requests being served or queued. */
  private final AtomicInteger inSystem = new AtomicInteger();
  private final AtomicIntegerArray received;
  private final AtomicIntegerArray served;
  private final LongAdder requests = new LongAdder();
  private final LongAdder rejected = new LongAdder();
  private final LongAdder withoutKey = new LongAdder();
  private final AtomicInteger maxQueued = new AtomicInteger();

  /**
   * @param capacity requests served per second, at least 1
   * @param workers requests served at a time, at least 1
   * @param queueLimit requests that may wait for a worker, at least 0
   * @param operations the number of operation indexes to count, at least 1
   */
  FixedCapacityServer(int capacity, int workers, int queueLimit, int operations) {
    if (capacity < 1 || workers < 1 || queueLimit < 0 || operations < 1) {
      throw new IllegalArgumentException("capacity " + capacity + ", workers " + workers
          + ", queueLimit " + queueLimit + ", operations " + operations);
    }
    this.capacity = capacity;
    this.workers = workers;
    this.queueLimit = queueLimit;
    this.serviceNanos = TimeUnit.SECONDS.toNanos(workers) / capacity;
    this.workerPermits = new Semaphore(workers, true);
    this.received = new AtomicIntegerArray(operations);
    this.served = new AtomicIntegerArray(operations);
    // MockWebServer writes headers and body apart: without TCP_NODELAY the body would wait ~40 ms
    // for the client's delayed ACK, on every answer.
    server.setServerSocketFactory(new NoDelayServerSocketFactory());
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        return handle(request);
      }
    });
  }

  FixedCapacityServer start() throws IOException {
    server.start();
    return this;
  }

  HttpUrl url(String path) {
    return server.url(path);
  }

  private MockResponse handle(RecordedRequest request) throws InterruptedException {
    requests.increment();
    int op = opIndex(request);
    if (op >= 0) {
      received.incrementAndGet(op);
    }
    if (request.getHeaders().get("Idempotency-Key") == null) {
      withoutKey.increment();
    }
    int now = inSystem.incrementAndGet();
    if (now > workers + queueLimit) {
      inSystem.decrementAndGet();
      rejected.increment();
      // The same advice as a rate-limit field (IETF httpapi RateLimit: nothing left for 1 s), which
      // only a client that paces from rate-limit headers reads: config (f).
      return new MockResponse.Builder().code(503).setHeader("Retry-After", "1")
          .setHeader("RateLimit", "\"overload\";r=0;t=1")
          .setHeader("Content-Type", "application/json").body("{\"error\":\"overloaded\"}").build();
    }
    maxQueued.accumulateAndGet(Math.max(0, now - workers), Math::max);
    try {
      workerPermits.acquire();
      try {
        long until = System.nanoTime() + serviceNanos;
        for (long left; (left = until - System.nanoTime()) > 0; ) {
          LockSupport.parkNanos(left);
        }
      } finally {
        workerPermits.release();
      }
    } finally {
      inSystem.decrementAndGet();
    }
    if (op >= 0) {
      served.incrementAndGet(op);
    }
    return new MockResponse.Builder().code(200).setHeader("Content-Type", "application/json")
        .body("{\"id\":\"pay_" + op + "\",\"status\":\"succeeded\"}").build();
  }

  private static int opIndex(RecordedRequest request) {
    String value = request.getHeaders().get(OP_HEADER);
    return value == null ? -1 : Integer.parseInt(value);
  }

  /** {@return the requests the server received for operation {@code op}} */
  int received(int op) {
    return received.get(op);
  }

  /** {@return the requests of operation {@code op} that were served (answered 200)} */
  int served(int op) {
    return served.get(op);
  }

  long requests() {
    return requests.sum();
  }

  long rejected() {
    return rejected.sum();
  }

  /** {@return requests that carried no {@code Idempotency-Key}} */
  long withoutKey() {
    return withoutKey.sum();
  }

  /** {@return the longest queue seen, in requests} */
  int maxQueued() {
    return maxQueued.get();
  }

  int capacity() {
    return capacity;
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}

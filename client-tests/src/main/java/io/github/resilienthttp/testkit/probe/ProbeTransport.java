package io.github.resilienthttp.testkit.probe;

import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import okhttp3.Headers;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Sends the probe's requests, all to one URL, and never more than a fixed number: every request
 * (a dropped one included) takes one unit of the cap first, and one past it is a bug that throws.
 * Sequential requests go through an OkHttp client with its own silent retries and redirects off
 * (one request written per call, and never to another URL); a burst and a dropped request go
 * through sockets the probe controls ({@link RawHttpConnection}). Not thread-safe (one probe run at
 * a time); not API.
 */
final class ProbeTransport implements Closeable {
  private static final int MAX_BODY = 64 * 1024;

  private final HttpUrl url;
  private final String method;
  private final MediaType contentType;
  private final Headers headers;
  private final String keyHeader;
  private final int cap;
  private final Duration timeout;
  private final OkHttpClient client;
  private int sent;

  ProbeTransport(
      HttpUrl url,
      String method,
      MediaType contentType,
      Headers headers,
      String keyHeader,
      int cap,
      Duration timeout) {
    this.url = url;
    this.method = method;
    this.contentType = contentType;
    this.headers = headers;
    this.keyHeader = keyHeader;
    this.cap = cap;
    this.timeout = timeout;
    this.client =
        new OkHttpClient.Builder()
            .proxy(java.net.Proxy.NO_PROXY) // as the raw connections: straight to the URL's host
            .retryOnConnectionFailure(false)
            .followRedirects(false)
            .followSslRedirects(false)
            .connectTimeout(timeout)
            .readTimeout(timeout)
            .writeTimeout(timeout)
            .callTimeout(timeout.multipliedBy(2))
            // A new connection per request: a server that closes after each answer (HTTP/1.0,
            // Connection: close) must not make the next request fail on a dead pooled connection.
            .connectionPool(new okhttp3.ConnectionPool(0, 1, TimeUnit.MILLISECONDS))
            .build();
  }

  int sent() {
    return sent;
  }

  /** One request, with {@code key} (or none when null), its answer read whole. */
  ProbeExchange send(String key, String body) {
    take(1);
    Request.Builder request = new Request.Builder().url(url).headers(headers);
    if (key != null) {
      request.header(keyHeader, key);
    }
    request.header("Content-Type", contentType.toString());
    request.method(method, RequestBody.create(body.getBytes(StandardCharsets.UTF_8), contentType));
    try (Response response = client.newCall(request.build()).execute()) {
      return new ProbeExchange(response.code(), response.headers(), readCapped(response.body()),
          null);
    } catch (IOException e) {
      return ProbeExchange.failed(e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  /** The body as UTF-8, at most 64 KiB of it. */
  private static String readCapped(ResponseBody body) throws IOException {
    okio.BufferedSource source = body.source();
    source.request(MAX_BODY);
    long n = Math.min(MAX_BODY, source.getBuffer().size());
    return source.getBuffer().readString(n, StandardCharsets.UTF_8);
  }

  /**
   * Writes the request on a new connection and closes it when the answer starts to arrive (or
   * after the timeout), without reading the answer.
   *
   * @return what happened, for the evidence
   */
  String sendAndDrop(String key, String body) {
    take(1);
    long start = System.nanoTime();
    try (RawHttpConnection connection = RawHttpConnection.open(url, timeout)) {
      connection.write(encode(key, body));
      boolean answered = connection.awaitAnswerStart();
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      return answered
          ? "closed unread when the answer began after " + ms + " ms"
          : "closed unread after " + ms + " ms without an answer";
    } catch (IOException e) {
      return "dropped request failed: " + e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  /**
   * Opens {@code n} connections, then writes one identical request on each at the same instant
   * (released by a barrier), and reads every answer.
   */
  List<ProbeExchange> burst(String key, String body, int n) throws InterruptedException {
    take(n);
    byte[] request = encode(key, body);
    CyclicBarrier barrier = new CyclicBarrier(n);
    ExecutorService threads = Executors.newFixedThreadPool(n, r -> {
      Thread t = new Thread(r, "idempotency-probe-burst");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<ProbeExchange>> answers = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        answers.add(threads.submit(() -> {
          RawHttpConnection connection = null;
          try {
            connection = RawHttpConnection.open(url, timeout);
          } catch (IOException e) {
            barrier.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return ProbeExchange.failed("connect: " + e.getMessage());
          }
          try (RawHttpConnection c = connection) {
            barrier.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
            c.write(request);
            return c.readResponse();
          } catch (IOException e) {
            return ProbeExchange.failed(e.getClass().getSimpleName() + ": " + e.getMessage());
          }
        }));
      }
      List<ProbeExchange> out = new ArrayList<>();
      long deadline = System.nanoTime() + timeout.multipliedBy(3).toNanos();
      for (Future<ProbeExchange> f : answers) {
        try {
          out.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
        } catch (java.util.concurrent.ExecutionException e) {
          out.add(ProbeExchange.failed(String.valueOf(e.getCause())));
        } catch (TimeoutException e) {
          f.cancel(true);
          out.add(ProbeExchange.failed("no answer within " + timeout.multipliedBy(3)));
        }
      }
      return out;
    } finally {
      threads.shutdownNow();
    }
  }

  private byte[] encode(String key, String body) {
    Headers.Builder h = headers.newBuilder().set("Content-Type", contentType.toString());
    if (key != null) {
      h.set(keyHeader, key);
    }
    return RawHttpConnection.encode(url, method, h.build(), body.getBytes(StandardCharsets.UTF_8));
  }

  /** Whether {@code n} more requests fit within the cap. */
  boolean fits(int n) {
    return sent + n <= cap;
  }

  int cap() {
    return cap;
  }

  /** Counts the requests, or refuses with {@link CapReached} when they would exceed the cap. */
  private void take(int n) {
    if (sent + n > cap) {
      throw new CapReached(sent + n, cap);
    }
    sent += n;
  }

  /** A check would have exceeded the request cap: it stops with "cannot tell within the cap". */
  static final class CapReached extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CapReached(int wanted, int cap) {
      super("the check needed " + wanted + " requests in all, over the cap of " + cap, null, false, false);
    }
  }

  @Override
  public void close() {
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
  }
}

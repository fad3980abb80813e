package demo;

import com.sun.net.httpserver.HttpServer;
import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttp;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/** A retried operation, blocking, async and as a plain call, on the oldest OkHttp accepted. */
public final class OldestOkHttp {
  public static void main(String[] args) {
    try {
      run();
    } catch (Throwable t) {
      // The server's and OkHttp's non-daemon threads would keep a failed run alive.
      t.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }

  private static void run() throws Exception {
    AtomicInteger requests = new AtomicInteger();
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", exchange -> {
      int status = requests.incrementAndGet() % 2 == 1 ? 503 : 200;
      byte[] body = "ok".getBytes();
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    Request get = new Request.Builder()
        .url("http://127.0.0.1:" + server.getAddress().getPort() + "/orders/1").build();
    OkHttpClient okHttp = new OkHttpClient();
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .build();

    try (Response r = client.operation(get).execute()) {
      check(r.code() == 200, "blocking " + r.code());
    }
    try (Response r = client.operation(get).executeAsync().get(10, TimeUnit.SECONDS)) {
      check(r.code() == 200, "async " + r.code());
    }
    try (Response r = client.okHttpClient().newCall(get).execute()) {
      check(r.code() == 200, "plain call " + r.code());
    }
    check(requests.get() == 6, "requests " + requests.get());
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.stop(0);
    System.out.println("OLDEST OKHTTP OK okhttp=" + OkHttp.VERSION);
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }
}

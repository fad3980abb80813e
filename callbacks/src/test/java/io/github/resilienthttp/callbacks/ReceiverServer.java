package io.github.resilienthttp.callbacks;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BiFunction;

/** A receiver's HTTP front on 127.0.0.1 (the JDK's HttpServer): bytes and headers in, response out. */
final class ReceiverServer implements AutoCloseable {
  static {
    // Without it, the JDK server's separate header and body writes meet Nagle's algorithm and the
    // client's delayed ACK: 40 ms per request.
    System.setProperty("sun.net.httpserver.nodelay", "true");
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(8);

  ReceiverServer(BiFunction<Map<String, List<String>>, byte[], CallbackResponse> receive) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/webhooks", exchange -> {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      CallbackResponse r = receive.apply(exchange.getRequestHeaders(), body);
      byte[] out = r.body().getBytes(StandardCharsets.UTF_8);
      r.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
      exchange.sendResponseHeaders(r.status(), out.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(out);
      }
    });
    server.setExecutor(executor);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks";
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}

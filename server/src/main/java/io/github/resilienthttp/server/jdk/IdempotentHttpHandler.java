package io.github.resilienthttp.server.jdk;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.github.resilienthttp.server.IdempotencyGuard;
import io.github.resilienthttp.server.IdempotentRequest;
import io.github.resilienthttp.server.IdempotentResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The guard on the JDK's own HTTP server ({@code com.sun.net.httpserver}): reads the whole request,
 * lets the {@link IdempotencyGuard} answer or run the handler, writes the response. The principal is
 * the exchange's authenticated principal ({@link HttpExchange#getPrincipal()}), if an
 * {@code Authenticator} set one. Thread-safe when the handler is.
 */
public final class IdempotentHttpHandler implements HttpHandler {
  /** The largest request body read, in bytes; a larger one gets {@code 413}. */
  public static final int MAX_REQUEST_BODY = 1024 * 1024;

  private final IdempotencyGuard guard;
  private final IdempotencyGuard.Handler plain;
  private final IdempotencyGuard.TransactionalHandler transactional;

  private IdempotentHttpHandler(IdempotencyGuard guard, IdempotencyGuard.Handler plain,
      IdempotencyGuard.TransactionalHandler transactional) {
    this.guard = Objects.requireNonNull(guard, "guard");
    this.plain = plain;
    this.transactional = transactional;
  }

  /**
   * A handler whose record completes on the store's own connection ({@link IdempotencyGuard#handle}).
   *
   * @param guard the guard
   * @param handler the business handler
   * @return the HTTP handler
   */
  public static IdempotentHttpHandler of(IdempotencyGuard guard, IdempotencyGuard.Handler handler) {
    return new IdempotentHttpHandler(guard, Objects.requireNonNull(handler, "handler"), null);
  }

  /**
   * A handler whose business writes and record commit in one transaction
   * ({@link IdempotencyGuard#handleInTransaction}; the guard's store must be JDBC).
   *
   * @param guard the guard
   * @param handler the business handler
   * @return the HTTP handler
   */
  public static IdempotentHttpHandler transactional(IdempotencyGuard guard,
      IdempotencyGuard.TransactionalHandler handler) {
    return new IdempotentHttpHandler(guard, null, Objects.requireNonNull(handler, "handler"));
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readNBytes(MAX_REQUEST_BODY + 1);
      }
      if (body.length > MAX_REQUEST_BODY) {
        write(exchange, IdempotentResponse.of(413, "text/plain", "request body over " + MAX_REQUEST_BODY + " bytes"));
        return;
      }
      Map<String, List<String>> headers = new LinkedHashMap<>(exchange.getRequestHeaders());
      IdempotentRequest request = new IdempotentRequest(exchange.getRequestMethod(),
          exchange.getRequestURI().getRawPath(), exchange.getRequestURI().getRawQuery(), headers, body,
          exchange.getPrincipal() == null ? null : exchange.getPrincipal().getName());
      IdempotentResponse response;
      try {
        response = plain != null ? guard.handle(request, plain) : guard.handleInTransaction(request, transactional);
      } catch (SQLException | RuntimeException e) {
        response = IdempotentResponse.of(500, "text/plain", "internal error");
      }
      write(exchange, response);
    }
  }

  private static void write(HttpExchange exchange, IdempotentResponse response) throws IOException {
    response.headers().forEach((name, values) -> exchange.getResponseHeaders().put(name, values));
    byte[] body = response.body();
    exchange.sendResponseHeaders(response.status(), body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }
}

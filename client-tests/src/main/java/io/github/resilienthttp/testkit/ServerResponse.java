package io.github.resilienthttp.testkit;

import java.util.Objects;
import okhttp3.Headers;

/**
 * A response produced by a {@link BusinessHandler} and stored by {@link IdempotentTestServer}
 * against an idempotency key so it can be replayed byte for byte.
 *
 * <p>{@code Content-Length} is computed by the server and must not be part of {@code headers} (it
 * is removed if present). Immutable and thread-safe.
 *
 * @param status the HTTP status code, 200..599
 * @param headers the response headers (without {@code Content-Length})
 * @param body the response body, encoded as UTF-8 on the wire; empty string for none
 */
public record ServerResponse(int status, Headers headers, String body) {

  /**
   * Validates and normalizes the components.
   *
   * @param status the HTTP status code, 200..599
   * @param headers the response headers; any {@code Content-Length} is removed
   * @param body the response body
   * @throws IllegalArgumentException if {@code status} is outside 200..599
   */
  public ServerResponse {
    if (status < 200 || status > 599) {
      throw new IllegalArgumentException("status must be 200..599: " + status);
    }
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(body, "body");
    if (headers.get("Content-Length") != null) {
      headers = headers.newBuilder().removeAll("Content-Length").build();
    }
  }

  /**
   * A response with a single {@code Content-Type} header.
   *
   * @param status the HTTP status code, 200..599
   * @param contentType the media type, e.g. {@code application/json}
   * @param body the body text
   * @return the response
   */
  public static ServerResponse of(int status, String contentType, String body) {
    return new ServerResponse(status, Headers.of("Content-Type", contentType), body);
  }

  /**
   * A response with {@code Content-Type: application/json}.
   *
   * @param status the HTTP status code, 200..599
   * @param json the JSON body text
   * @return the response
   */
  public static ServerResponse json(int status, String json) {
    return of(status, "application/json", json);
  }

  /**
   * Returns a copy with one extra header appended (existing values are kept).
   *
   * @param name header name
   * @param value header value, sent verbatim
   * @return the new response
   */
  public ServerResponse withHeader(String name, String value) {
    return new ServerResponse(status, headers.newBuilder().add(name, value).build(), body);
  }
}

package io.github.resilienthttp.server;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An HTTP response the guard answers with or records: status, headers and the whole body.
 *
 * @param status the status code, 100..599
 * @param headers header values by name, in order (read-only copy)
 * @param body the body, empty when there is none (the array is not copied: do not change it)
 */
public record IdempotentResponse(int status, Map<String, List<String>> headers, byte[] body) {

  /**
   * Validates.
   *
   * @param status the status
   * @param headers the headers
   * @param body the body, may be null for none
   */
  public IdempotentResponse {
    if (status < 100 || status > 599) throw new IllegalArgumentException("status: " + status + " is outside 100..599");
    Map<String, List<String>> copy = new LinkedHashMap<>();
    Objects.requireNonNull(headers, "headers").forEach((k, v) -> copy.put(k, List.copyOf(v)));
    headers = Collections.unmodifiableMap(copy);
    body = body == null ? new byte[0] : body;
  }

  /**
   * A response with a body and a content type.
   *
   * @param status the status
   * @param contentType the {@code Content-Type}
   * @param body the body as UTF-8 text
   * @return the response
   */
  public static IdempotentResponse of(int status, String contentType, String body) {
    return new IdempotentResponse(status, Map.of("Content-Type", List.of(contentType)),
        body.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The first value of a header, matched case-insensitively.
   *
   * @param name the header name
   * @return the value, or {@code null}
   */
  public String header(String name) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty()) return e.getValue().get(0);
    }
    return null;
  }

  /** {@return the body decoded as UTF-8} */
  public String bodyText() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /**
   * This response with one more header (replacing any of the same name, any case).
   *
   * @param name the header name
   * @param value its value
   * @return the new response
   */
  public IdempotentResponse withHeader(String name, String value) {
    Map<String, List<String>> copy = new LinkedHashMap<>();
    headers.forEach((k, v) -> {
      if (!k.equalsIgnoreCase(name)) copy.put(k, v);
    });
    copy.put(name, List.of(value));
    return new IdempotentResponse(status, copy, body);
  }

  @Override
  public String toString() {
    return "IdempotentResponse{" + status + ", headers=" + headers.keySet() + ", body=" + body.length + " bytes}";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IdempotentResponse r && r.status == status && r.headers.equals(headers)
        && java.util.Arrays.equals(r.body, body);
  }

  @Override
  public int hashCode() {
    return Objects.hash(status, headers, java.util.Arrays.hashCode(body));
  }
}

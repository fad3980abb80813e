package io.github.resilienthttp.server;

import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the guard needs of one HTTP request, whatever the web framework: the method, path, raw query,
 * headers, the whole body, and the authenticated principal when the adapter knows one.
 *
 * @param method the method, upper case ({@code POST})
 * @param path the path without the query ({@code /payments})
 * @param query the raw query without {@code ?}, or {@code null} when there is none
 * @param headers header values by name; names are matched case-insensitively
 * @param body the whole body, empty when there is none (the array is not copied: do not change it)
 * @param principal the authenticated principal's name, or {@code null}
 */
public record IdempotentRequest(String method, String path, String query, Map<String, List<String>> headers,
    byte[] body, String principal) {

  /**
   * Validates and normalises: the method upper case, headers in a case-insensitive read-only map.
   *
   * @param method the method
   * @param path the path
   * @param query the query, may be null
   * @param headers the headers
   * @param body the body, may be null for none
   * @param principal the principal, may be null
   */
  public IdempotentRequest {
    method = Objects.requireNonNull(method, "method").toUpperCase(Locale.ROOT);
    Objects.requireNonNull(path, "path");
    Map<String, List<String>> copy = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    Objects.requireNonNull(headers, "headers").forEach((k, v) -> copy.put(k, List.copyOf(v)));
    headers = Collections.unmodifiableMap(copy);
    body = body == null ? new byte[0] : body;
  }

  /**
   * The first value of a header.
   *
   * @param name the header name, any case
   * @return its first value, or empty when absent
   */
  public Optional<String> header(String name) {
    List<String> values = headers.get(name);
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }

  /** Omits the body and the header values (they may carry credentials). */
  @Override
  public String toString() {
    return "IdempotentRequest{" + method + " " + path + (query == null ? "" : "?" + query)
        + ", body=" + body.length + " bytes, principal=" + principal + "}";
  }
}

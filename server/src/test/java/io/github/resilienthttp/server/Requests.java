package io.github.resilienthttp.server;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Requests for the guard's tests. */
final class Requests {
  private Requests() {}

  static IdempotentRequest post(String key, String body) {
    return post(key, body, "alice");
  }

  static IdempotentRequest post(String key, String body, String principal) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    if (key != null) headers.put("Idempotency-Key", List.of(key));
    headers.put("Content-Type", List.of("application/json"));
    return new IdempotentRequest("POST", "/payments", null, headers,
        body.getBytes(StandardCharsets.UTF_8), principal);
  }
}

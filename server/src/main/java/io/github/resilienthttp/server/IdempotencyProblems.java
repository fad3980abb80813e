package io.github.resilienthttp.server;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The RFC 9457 problem answers of the IETF draft "The Idempotency-Key HTTP Header Field" (section
 * "Error Scenarios"): {@code 400} for a missing or malformed key, {@code 409} for a request with a key
 * still being processed, {@code 422} for a key reused with another payload. The draft registers no
 * type URI (its examples point at the API's documentation); the types here name "idempotency", which
 * is what clients (this SDK's classifier among them) look for, and the titles are the draft's.
 */
public final class IdempotencyProblems {
  /** Missing key where one is required, or a malformed key: {@code 400}. */
  public static final String KEY_INVALID = "https://resilienthttp.github.io/problems/idempotency-key-invalid";
  /** The key's first request is still in progress: {@code 409}. */
  public static final String KEY_IN_USE = "https://resilienthttp.github.io/problems/idempotency-key-in-use";
  /** The key was used with another request: {@code 422}. */
  public static final String KEY_MISMATCH = "https://resilienthttp.github.io/problems/idempotency-key-mismatch";
  /** The key was used longer ago than the retention: {@code 422}. */
  public static final String KEY_EXPIRED = "https://resilienthttp.github.io/problems/idempotency-key-expired";
  /** The media type of the answers. */
  public static final String MEDIA_TYPE = "application/problem+json";

  private IdempotencyProblems() {}

  static IdempotentResponse missing() {
    return problem(400, KEY_INVALID, "Idempotency-Key is missing",
        "This operation is idempotent and it requires correct usage of Idempotency Key.", null);
  }

  static IdempotentResponse invalid(String why) {
    return problem(400, KEY_INVALID, "Idempotency-Key is invalid", why, null);
  }

  static IdempotentResponse inUse(Duration retryAfter) {
    return problem(409, KEY_IN_USE, "A request is outstanding for this Idempotency-Key",
        "A request with the same Idempotency-Key for the same operation is being processed or is"
            + " outstanding. Retry after the Retry-After delay.", retryAfter);
  }

  static IdempotentResponse mismatch() {
    return problem(422, KEY_MISMATCH, "Idempotency-Key is already used",
        "This operation is idempotent and it requires correct usage of Idempotency Key. Idempotency"
            + " Key MUST not be reused across different payloads of this operation.", null);
  }

  static IdempotentResponse expired() {
    return problem(422, KEY_EXPIRED, "Idempotency-Key is expired",
        "This Idempotency-Key was used longer ago than this API keeps keys; its outcome is not"
            + " replayed. Look the outcome up, or send a new key for a new operation.", null);
  }

  private static IdempotentResponse problem(int status, String type, String title, String detail,
      Duration retryAfter) {
    String json = "{\"type\":\"" + type + "\",\"title\":\"" + title + "\",\"status\":" + status
        + ",\"detail\":\"" + detail.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type", List.of(MEDIA_TYPE));
    if (retryAfter != null) {
      headers.put("Retry-After", List.of(Long.toString(Math.max(1, (retryAfter.toMillis() + 999) / 1000))));
    }
    return new IdempotentResponse(status, headers, json.getBytes(StandardCharsets.UTF_8));
  }
}

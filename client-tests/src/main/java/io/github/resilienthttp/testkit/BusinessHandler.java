package io.github.resilienthttp.testkit;

import mockwebserver3.RecordedRequest;

/**
 * The pluggable "business logic" of {@link IdempotentTestServer}: builds the response for a request
 * that is actually processed (never for replays, conflicts or injected faults).
 *
 * <p>Implementations are called concurrently from several MockWebServer threads and must be
 * thread-safe. They should be fast; use {@link IdempotentTestServer.Builder#processingTime} to
 * simulate slow processing. If the handler throws, the server answers 500 and forgets the key so
 * that a retry is processed again (the effect that was already counted stays counted).
 */
@FunctionalInterface
public interface BusinessHandler {

  /**
   * Builds the response for one processed request.
   *
   * @param request the request as received by MockWebServer
   * @param effectNumber the 1-based number of the business effect this request performed, or 0
   *     if the method has no effect (e.g. GET)
   * @return the response to send and, for keyed requests, to record for replays
   * @throws Exception to make the server answer 500
   */
  ServerResponse handle(RecordedRequest request, int effectNumber) throws Exception;

  /**
   * The default handler: for requests with an effect, {@code 201} with {@code Content-Type:
   * application/json} and body {@code {"id":"pay_<n>","effect":<n>}}; otherwise {@code 200} with
   * {@code {"ok":true}}.
   *
   * @return the default handler (stateless, thread-safe)
   */
  static BusinessHandler defaultHandler() {
    return defaultHandler(0);
  }

  /**
   * The default handler with bodies padded by a {@code "padding"} JSON member of {@code
   * paddingChars} ASCII characters, e.g. {@code {"id":"pay_1","effect":1,"padding":"xxxx"}}; useful
   * with {@link Fault#throttleBody(long, java.time.Duration)}.
   *
   * @param paddingChars number of padding characters (= bytes); 0 for no padding member
   * @return the handler (stateless, thread-safe)
   * @throws IllegalArgumentException if {@code paddingChars} is negative
   */
  static BusinessHandler defaultHandler(int paddingChars) {
    if (paddingChars < 0) {
      throw new IllegalArgumentException("paddingChars must be >= 0: " + paddingChars);
    }
    String padding = paddingChars == 0 ? "" : ",\"padding\":\"" + "x".repeat(paddingChars) + "\"";
    return (request, effectNumber) -> {
      if (effectNumber > 0) {
        return ServerResponse.json(
            201, "{\"id\":\"pay_" + effectNumber + "\",\"effect\":" + effectNumber + padding + "}");
      }
      return ServerResponse.json(200, "{\"ok\":true" + padding + "}");
    };
  }
}

package io.github.resilienthttp.spring;

import io.github.resilienthttp.callbacks.CallbackResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.ResponseEntity;

/**
 * Spring MVC glue for a callback endpoint: the request's headers as the receiver reads them, and the
 * receiver's answer as a {@link ResponseEntity} (status, {@code Retry-After} and content type, JSON
 * body). For a controller of your own:
 *
 * <pre>{@code
 * @PostMapping("/webhooks/payments")
 * ResponseEntity<String> webhook(HttpServletRequest request, @RequestBody byte[] body) {
 *   return CallbackEndpoints.toResponseEntity(
 *       receiver.receive(CallbackEndpoints.headers(request), body, this::apply));
 * }
 * }</pre>
 *
 * <p>Stateless; thread-safe.
 */
public final class CallbackEndpoints {
  private CallbackEndpoints() {}

  /**
   * The request's headers, every value of each.
   *
   * @param request the servlet request
   * @return header name to values
   */
  public static Map<String, List<String>> headers(HttpServletRequest request) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    for (String name : Collections.list(request.getHeaderNames())) {
      headers.put(name, Collections.list(request.getHeaders(name)));
    }
    return headers;
  }

  /**
   * The answer as a response: the outcome's status (200, 400, 401, 409, 500, 503), its headers and
   * its JSON body, which never contains a secret, a signature or the delivery's body.
   *
   * @param response what the receiver answered
   * @return the response entity
   */
  public static ResponseEntity<String> toResponseEntity(CallbackResponse response) {
    return ResponseEntity.status(response.status())
        .headers(h -> response.headers().forEach(h::set))
        .body(response.body());
  }
}

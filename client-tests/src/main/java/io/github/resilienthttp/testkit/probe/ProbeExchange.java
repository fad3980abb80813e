package io.github.resilienthttp.testkit.probe;

import java.util.Objects;
import okhttp3.Headers;

/**
 * One answer the probe received, as it came off the wire, or the I/O failure that replaced it.
 * Immutable.
 *
 * @param status the HTTP status, or -1 when the exchange failed
 * @param headers the response headers (empty when it failed)
 * @param body the response body as UTF-8 (capped at 64 KiB; empty when it failed)
 * @param failure the failure's message, or {@code null} when a response arrived
 */
public record ProbeExchange(int status, Headers headers, String body, String failure) {

  /**
   * Validates the components.
   *
   * @param status the status or -1
   * @param headers the headers
   * @param body the body
   * @param failure the failure or null
   */
  public ProbeExchange {
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(body, "body");
  }

  static ProbeExchange failed(String failure) {
    return new ProbeExchange(-1, Headers.of(), "", failure);
  }

  /**
   * Tells whether the server answered 2xx.
   *
   * @return true for 200..299
   */
  public boolean successful() {
    return status >= 200 && status < 300;
  }

  /**
   * The first value of a response header.
   *
   * @param name the header name (case-insensitive)
   * @return the value or {@code null}
   */
  public String header(String name) {
    return headers.get(name);
  }

  /** "201" or "no answer (reason)", for evidence. */
  String statusText() {
    return status >= 0 ? Integer.toString(status) : "no answer (" + failure + ")";
  }
}

package io.github.resilienthttp.json;

import java.io.IOException;
import java.util.Objects;

/**
 * A response body could not be turned into the expected Java value: it was empty, was not
 * well-formed JSON, or its JSON did not match the type. The subclass {@link JsonBodyTooLargeException}
 * says the body was over the size limit.
 *
 * <p>The message names the status code, the expected type and, for a JSON error, the Jackson
 * exception's class and position (line and column); never the body. The {@link #getCause() cause},
 * when present, is Jackson's exception, whose own message may quote part of the body.
 *
 * <p>Thrown as is by {@link JsonCodec#read(okhttp3.Response, Class)}; wrapped in an
 * {@link io.github.resilienthttp.ResilientHttpException} that carries the idempotency key by
 * {@link JsonCodec#execute(io.github.resilienthttp.Operation, Class)}.
 */
public class JsonBodyException extends IOException {
  private static final long serialVersionUID = 1L;

  /** The response's status code. */
  private final int statusCode;
  /** The canonical name of the expected type. */
  private final String expectedType;

  /**
   * Creates the exception.
   *
   * @param message what went wrong, without the body
   * @param statusCode the response's status code
   * @param expectedType the type the body was read as, e.g. {@code java.util.List<com.example.Item>}
   * @param cause Jackson's exception, or {@code null}
   */
  public JsonBodyException(String message, int statusCode, String expectedType, Throwable cause) {
    super(message, cause);
    this.statusCode = statusCode;
    this.expectedType = Objects.requireNonNull(expectedType, "expectedType");
  }

  /**
   * The status code of the response whose body this was.
   *
   * @return the status code of the response whose body this was
   */
  public int statusCode() {
    return statusCode;
  }

  /**
   * The canonical name of the expected type, e.g. {@code java.util.List<com.example.Item>}.
   *
   * @return the canonical name of the expected type, e.g
   */
  public String expectedType() {
    return expectedType;
  }
}

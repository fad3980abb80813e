package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.Operation;
import okhttp3.Request;

/**
 * Makes the operations that the SDK runs on its own (polls, outcome queries, re-sends, a
 * server-side cancel): the client passes it to its runtime, so that code outside the API package
 * starts work only through an {@link Operation} and its driver. Not API.
 */
@FunctionalInterface
public interface OperationFactory {
  /**
   * A new operation of {@code runtime}'s client.
   *
   * @param runtime the client's runtime
   * @param request the request
   * @param firstKind how its first attempt is reported ({@link AttemptKind#POLL}, ...)
   * @return the operation, not yet run
   */
  Operation create(ClientRuntime runtime, Request request, AttemptKind firstKind);
}

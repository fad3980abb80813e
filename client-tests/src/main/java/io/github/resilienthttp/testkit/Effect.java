package io.github.resilienthttp.testkit;

/**
 * One business effect performed by {@link IdempotentTestServer}: the "work" done the first time a
 * non-idempotent request (by default POST or PATCH) was processed, e.g. one payment created.
 * Duplicated effects for the same business operation are what safe retries must prevent.
 *
 * <p>Immutable and thread-safe.
 *
 * @param number 1-based effect sequence number, in the order effects were performed
 * @param key the idempotency key header value, verbatim, or {@code null} if the request had none
 * @param method the HTTP method, e.g. {@code POST}
 * @param path the encoded path plus {@code ?query} if any, e.g. {@code /payments}
 * @param body the request body decoded as UTF-8 (empty string if none)
 */
public record Effect(int number, String key, String method, String path, String body) {}

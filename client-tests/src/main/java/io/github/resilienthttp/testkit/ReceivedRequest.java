package io.github.resilienthttp.testkit;

import okhttp3.Headers;

/**
 * Immutable snapshot of one request that reached {@link IdempotentTestServer}'s dispatcher, with
 * the fault applied to it and how it was handled. Thread-safe.
 *
 * @param sequence 1-based arrival number (order in which requests reached the dispatcher)
 * @param method the HTTP method
 * @param path the encoded path plus {@code ?query} if any
 * @param headers all request headers
 * @param body the request body decoded as UTF-8 (empty string if none)
 * @param key the idempotency key header value verbatim, or {@code null} if absent
 * @param fault the fault applied ({@link Fault#ok()} if none)
 * @param outcome how the request was handled; {@link Outcome#PENDING} while still in progress
 * @param status the status code actually sent, or -1 if no response was sent (dropped, stalled,
 *     or still pending)
 */
public record ReceivedRequest(
    int sequence,
    String method,
    String path,
    Headers headers,
    String body,
    String key,
    Fault fault,
    Outcome outcome,
    int status) {}

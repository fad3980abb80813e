/**
 * A hostile sender for tests of a webhook receiver: {@link
 * io.github.resilienthttp.callbacks.testkit.CallbackSender} delivers signed events over real HTTP the
 * way senders do (at least once, retrying non-2xx with backoff) and adds duplicates, delays,
 * reordering, stale replays, forgeries and rotated secrets. Artifact
 * {@code resilient-http-callbacks-testkit}, for test scope: it depends on OkHttp, the receiver in
 * {@code resilient-http-callbacks} does not.
 */
package io.github.resilienthttp.callbacks.testkit;

/**
 * A hostile sender for tests of a webhook receiver: {@link
 * io.github.resilienthttp.callbacks.testkit.CallbackSender} delivers signed events over real HTTP the
 * way senders do (at least once, retrying non-2xx with backoff) and adds duplicates, delays,
 * reordering, stale replays, forgeries and rotated secrets. Needs {@code com.squareup.okhttp3:okhttp-jvm}
 * on the test class path (an optional dependency of this artifact).
 */
package io.github.resilienthttp.callbacks.testkit;

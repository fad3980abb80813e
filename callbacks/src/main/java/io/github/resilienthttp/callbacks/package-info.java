/**
 * Receiving callbacks (webhooks) and queue messages so that each event takes effect once.
 *
 * <p>Three steps, each usable alone:
 *
 * <ol>
 *   <li><b>Verify</b> ({@link io.github.resilienthttp.callbacks.CallbackVerifier}): the raw body bytes
 *       and the headers are checked against a {@link io.github.resilienthttp.callbacks.SignatureScheme}
 *       ({@link io.github.resilienthttp.callbacks.StandardWebhooksScheme},
 *       {@link io.github.resilienthttp.callbacks.StripeScheme}, or your own), then the signed timestamp
 *       against a tolerance in both directions.
 *   <li><b>Deduplicate</b> ({@link io.github.resilienthttp.callbacks.ProcessingStore}): one processing
 *       record per (scope, event ID), claimed with a lease, completed with a result, released on
 *       failure; in memory or in a database
 *       ({@link io.github.resilienthttp.callbacks.JdbcProcessingStore}), where completion runs in the
 *       same transaction as the business change.
 *   <li><b>Receive</b> ({@link io.github.resilienthttp.callbacks.CallbackReceiver}): verify, claim, run
 *       the handler, complete, and answer with the HTTP status a sender expects.
 * </ol>
 *
 * <p>No web framework is needed: requests come in as bytes and a header map, responses go out as a
 * {@link io.github.resilienthttp.callbacks.CallbackResponse}. {@code ...callbacks.internal} is not API;
 * the hostile sender for tests is {@code io.github.resilienthttp.callbacks.testkit}, in its own artifact
 * {@code resilient-http-callbacks-testkit}.
 */
package io.github.resilienthttp.callbacks;

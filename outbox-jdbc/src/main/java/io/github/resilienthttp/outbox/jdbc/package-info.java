/**
 * {@link io.github.resilienthttp.outbox.jdbc.JdbcOutbox}: the failure exit of
 * {@link io.github.resilienthttp.Operation#parkIndefiniteOutcomes(io.github.resilienthttp.Outbox)} in a
 * database table, so that parked intents survive a restart and can be parked in the same transaction
 * as the business record.
 */
package io.github.resilienthttp.outbox.jdbc;

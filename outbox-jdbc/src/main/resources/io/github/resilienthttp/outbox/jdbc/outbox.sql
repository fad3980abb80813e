-- Parked intents of resilient-http-outbox-jdbc (io.github.resilienthttp.outbox.jdbc.JdbcOutbox).
-- Runs unchanged on PostgreSQL (12+) and H2 (2.x); JdbcOutbox.createSchema() runs it with the
-- configured table name in place of resilient_http_outbox.
--
-- One row per intent, keyed by its idempotency key: parking the same key again replaces the row (an
-- upsert, so two processes parking the same key at once leave one row). Times are epoch milliseconds.
--   idempotency_key  the intent's key (ResumeToken.idempotencyKey(), up to 255 visible ASCII characters)
--   token            ResumeToken.toText(): key, key age, method and URL, status resource if accepted;
--                    never the request body or header secrets
--   reason           the OperationFailure.reason() that parked it, e.g. outcome-unknown
--   parked_at        when it was first parked
--   tries            how many times a resumer has tried it
--   next_due_at      when a resumer may next try it; due() and claim() read rows in this order. A claim
--                    moves it to the end of its lease, so a claimed row is due again when the lease
--                    runs out (and another resumer may take it over)
--   lease_token      the fencing token of the current claim (a UUID), NULL when unclaimed: complete,
--                    reschedule and renew act only on the row whose lease_token is the caller's
--
-- A table made by the previous version (without lease_token) is migrated by the ALTER TABLE below,
-- which createSchema() runs too: the new column starts NULL (no row claimed), nothing else changes.
CREATE TABLE IF NOT EXISTS resilient_http_outbox (
  idempotency_key  VARCHAR(255)   NOT NULL,
  token            VARCHAR(16384) NOT NULL,
  reason           VARCHAR(200)   NOT NULL,
  parked_at        BIGINT         NOT NULL,
  tries            INTEGER        NOT NULL,
  next_due_at      BIGINT         NOT NULL,
  lease_token      VARCHAR(36),
  CONSTRAINT resilient_http_outbox_pk PRIMARY KEY (idempotency_key)
);
CREATE INDEX IF NOT EXISTS resilient_http_outbox_next_due_at ON resilient_http_outbox (next_due_at);
ALTER TABLE resilient_http_outbox ADD COLUMN IF NOT EXISTS lease_token VARCHAR(36);
CREATE INDEX IF NOT EXISTS resilient_http_outbox_parked_at ON resilient_http_outbox (parked_at);

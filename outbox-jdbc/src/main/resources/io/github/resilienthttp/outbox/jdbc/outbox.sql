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
--   next_due_at      when a resumer may next try it; due() reads rows in this order
CREATE TABLE IF NOT EXISTS resilient_http_outbox (
  idempotency_key  VARCHAR(255)   NOT NULL,
  token            VARCHAR(16384) NOT NULL,
  reason           VARCHAR(200)   NOT NULL,
  parked_at        BIGINT         NOT NULL,
  tries            INTEGER        NOT NULL,
  next_due_at      BIGINT         NOT NULL,
  CONSTRAINT resilient_http_outbox_pk PRIMARY KEY (idempotency_key)
);
CREATE INDEX IF NOT EXISTS resilient_http_outbox_next_due_at ON resilient_http_outbox (next_due_at);

-- Processing records of resilient-http-callbacks (io.github.resilienthttp.callbacks.JdbcProcessingStore).
-- Runs unchanged on PostgreSQL (12+) and H2 (2.x); JdbcProcessingStore.createSchema() runs it with the
-- configured table name in place of callback_processing.
--
-- One row per (scope, event_id). The primary key is what makes a claim race-free: two consumers that
-- insert the same pair at once cannot both succeed. Times are epoch milliseconds of the store's clock.
--   state            IN_PROGRESS (a consumer holds, or held, the lease) or DONE
--   lease_token      the holder's token; completion checks it, so a consumer whose lease was taken
--                    over cannot complete
--   lease_expires_at after this, another consumer may take the record over
--   attempts         how many times the record was claimed for processing
--   result           what the completing consumer stored (up to 4000 characters), returned to duplicates
--   completed_at     when it became DONE; purgeExpired() deletes DONE rows older than the retention
CREATE TABLE IF NOT EXISTS callback_processing (
  scope            VARCHAR(200)  NOT NULL,
  event_id         VARCHAR(200)  NOT NULL,
  state            VARCHAR(16)   NOT NULL,
  lease_token      VARCHAR(64),
  lease_expires_at BIGINT,
  attempts         INTEGER       NOT NULL,
  result           VARCHAR(4000),
  created_at       BIGINT        NOT NULL,
  completed_at     BIGINT,
  CONSTRAINT callback_processing_pk PRIMARY KEY (scope, event_id)
);
CREATE INDEX IF NOT EXISTS callback_processing_completed_at ON callback_processing (completed_at);

package io.github.resilienthttp.examples;

/**
 * What a client counts about its own operations, whichever way it retries: the client-side columns
 * of the demo's table.
 */
interface ClientCounts {

  /** Operations started: one per payment to create. */
  int operations();

  /** Operations that ended with a successful response. */
  int succeeded();

  /** Requests the client sent, first attempts and retries together. */
  int attempts();

  /** Attempts beyond the first of each operation. */
  int retries();

  /** Answers the server marked as a replay of an earlier result for the same idempotency key. */
  int replays();

  /** Operations that ended without knowing whether the server processed them. */
  int outcomeUnknown();

  /** Operations that ended with any other failure. */
  int failed();
}

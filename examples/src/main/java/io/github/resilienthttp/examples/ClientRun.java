package io.github.resilienthttp.examples;

/**
 * One row of the demo's table: what one client counted, and what the server saw and charged while
 * that client ran.
 *
 * @param client the client's name in the table
 * @param operations payments the client was asked to create
 * @param succeeded operations that ended with a successful response
 * @param attempts requests the client sent
 * @param retries attempts beyond the first of each operation
 * @param replays answers the server marked as replays of a stored result
 * @param outcomeUnknown operations that ended without knowing whether they were charged
 * @param failed operations that ended with any other failure
 * @param serverRequests requests the server received
 * @param charges payments the server created
 * @param duplicateCharges charges beyond the first for the same order
 */
public record ClientRun(
    String client,
    int operations,
    int succeeded,
    int attempts,
    int retries,
    int replays,
    int outcomeUnknown,
    int failed,
    int serverRequests,
    int charges,
    int duplicateCharges) {}

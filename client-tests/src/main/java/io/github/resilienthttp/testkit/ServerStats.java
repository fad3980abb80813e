package io.github.resilienthttp.testkit;

/**
 * What an {@link IdempotentTestServer} counted, as one immutable value: take a snapshot with {@link
 * IdempotentTestServer#stats()} and assert on its components. All counts are since the server
 * started or its last {@link IdempotentTestServer#reset()}, except {@link #effects()}, which counts
 * the business writes of the server's {@link IdempotencyLedger} (durable: they survive a {@link
 * IdempotentTestServer#restart() restart}).
 *
 * <p>Counters are taken under one lock and are consistent with each other when no request is in
 * flight (a request counts as arrived before it is processed).
 *
 * @param requests requests that reached the dispatcher (faulted or not); requests that failed while
 *     being read (the client hung up mid-body) never reach it
 * @param effects business effects in the ledger (e.g. payments created)
 * @param replays answers replaying the response recorded for a key
 * @param inProgress {@code 409} answers: the first request with the key was still in progress
 * @param mismatches {@code 422} answers: the key was reused with a different request
 * @param missingKeys effect-method requests without a key (rejected with 400 or processed)
 * @param faulted requests that got an actual fault (scripted or random; {@link Fault#ok()} does not
 *     count)
 * @param recoveries in-progress records taken over after their lease expired (see {@link
 *     CrashPoint})
 * @param maxConcurrent peak number of dispatch calls in flight at once (includes the processing
 *     time, not header delays, throttling or stalls, which happen after dispatch returns)
 * @param inFlight dispatch calls in flight when the snapshot was taken
 */
public record ServerStats(
    int requests,
    int effects,
    int replays,
    int inProgress,
    int mismatches,
    int missingKeys,
    int faulted,
    int recoveries,
    int maxConcurrent,
    int inFlight) {}

package io.github.resilienthttp.testkit;

/**
 * Where an {@link IdempotentTestServer} crashes in the three steps a keyed request goes through: (1)
 * claim the key (an in-progress record with a lease), (2) the business write, (3) mark the key done
 * with the response to replay, then answer. Arm a crash with {@link
 * IdempotentTestServer#crashAt(CrashPoint)}; the next keyed request that reaches the point closes
 * its connection unanswered and the server stops (its listening socket closes, as a process that
 * died). The server's {@link IdempotencyLedger} keeps what was written; {@link
 * IdempotentTestServer#restart()} starts a new server on it.
 *
 * <h2>Recovery (what a payments server does)</h2>
 *
 * The business write stores the key with the business row (a payment has a unique {@code
 * idempotency_key} column), so whether step 2 happened can be looked up. A retry with the key:
 *
 * <ul>
 *   <li>finds a completed record: replays it ({@link #AFTER_KEY_COMPLETED}: the first retry gets the
 *       replay);
 *   <li>finds an in-progress record whose lease has not expired: {@code 409}, retry later (the
 *       owner may still be working);
 *   <li>finds an in-progress record whose lease expired (its owner died): takes the lease over and
 *       looks for the business write. Found ({@link #AFTER_BUSINESS_WRITE}): the response is rebuilt
 *       from it, the record is completed and the retry gets it marked as a replay (nothing executed
 *       again; {@link Outcome#RECOVERED}). Not found ({@link #AFTER_KEY_REGISTERED}): the request is
 *       executed now, once ({@link Outcome#CREATED}).
 * </ul>
 *
 * The lease ({@link IdempotentTestServer.Builder#inProgressLease}) must be longer than any request
 * takes; a lease taken over fences the old owner out (its later write or completion is refused).
 */
public enum CrashPoint {
  /** After the in-progress record was inserted, before the business write. */
  AFTER_KEY_REGISTERED,
  /** After the business write, before the record was marked done. */
  AFTER_BUSINESS_WRITE,
  /** After the record was marked done with its response, before the response was sent. */
  AFTER_KEY_COMPLETED
}

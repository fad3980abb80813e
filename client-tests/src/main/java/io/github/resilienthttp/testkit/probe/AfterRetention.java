package io.github.resilienthttp.testkit.probe;

/**
 * What a server documents for a retry that arrives after its key's retention (the IETF draft lets
 * the server forget a key after a documented period), checked by {@link ProbeCheck#RETENTION}.
 */
public enum AfterRetention {
  /** The key was forgotten: the retry is a new request and executes (a new resource). */
  EXECUTED_AGAIN,
  /** The key is still known: the retry is replayed (the retention is longer than the wait). */
  REPLAYED,
  /** The retry is refused with a 4xx status (e.g. 410 or 422) and not executed. */
  REJECTED
}

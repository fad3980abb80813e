package io.github.resilienthttp.testkit.probe;

/** The verdict of one {@link ProbeCheck}. */
public enum Verdict {
  /** The server behaved as the check requires. */
  PASS,
  /** The server did not; the evidence says what it did instead. */
  FAIL,
  /** Not run: not configured (checks 5 and 6), or no request could be made for it. */
  NOT_APPLICABLE
}

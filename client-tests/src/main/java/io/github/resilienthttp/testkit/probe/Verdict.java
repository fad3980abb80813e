package io.github.resilienthttp.testkit.probe;

/** The verdict of one {@link ProbeCheck}. */
public enum Verdict {
  /** The server behaved as the check requires. */
  PASS,
  /** The server did not; the evidence says what it did instead. */
  FAIL,
  /**
   * The answers cannot show whether the request took effect once: they carry no resource id (e.g.
   * {@code 201 {"status":"created"}} or {@code 204} every time) and no replay marker, and no effect
   * counter was given; or the check would have exceeded the request cap. Not a pass.
   */
  CANNOT_TELL,
  /** Not run: not configured (checks 5 and 6), or no request could be made for it. */
  NOT_APPLICABLE
}

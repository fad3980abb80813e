package io.github.resilienthttp.testkit.probe;

/**
 * The checks of an {@link IdempotencyProbe}, in the order they run. Each is one question of the
 * pre-launch checklist that only the server can answer (docs/checklist.md).
 */
public enum ProbeCheck {
  /** 1: a retry with the same key and body is replayed (same status and resource), not executed. */
  REPLAY(1, "retry with the same key and body is replayed"),
  /** 2: the same key with a different body is rejected (422 by default) and not executed. */
  KEY_REUSE_REJECTED(2, "same key, different body is rejected"),
  /** 3: identical requests with one key at the same instant: at most one execution. */
  CONCURRENT_REQUESTS(3, "concurrent identical requests execute at most once"),
  /** 4: a request whose answer was never read, retried with its key, gets the original result. */
  LOST_RESPONSE(4, "lost response, retried with its key, gets the original result"),
  /** 5: a request without a key is rejected (400 by default), when the server requires keys. */
  KEY_REQUIRED(5, "request without a key is rejected"),
  /** 6: a retry after the key's retention behaves as the server documents. */
  RETENTION(6, "retry after the retention behaves as documented");

  private final int number;
  private final String title;

  ProbeCheck(int number, String title) {
    this.number = number;
    this.title = title;
  }

  /**
   * The check's number, as printed and in the pre-launch checklist (docs/checklist.md).
   *
   * @return 1..6
   */
  public int number() {
    return number;
  }

  /**
   * A one-line description.
   *
   * @return the title
   */
  public String title() {
    return title;
  }
}

package io.github.resilienthttp.callbacks;

/**
 * A consumer tried to complete (or release) a record with a lease it no longer holds: the lease expired
 * and another consumer took the record over, or the record is already done. The caller must undo its
 * work; with {@link JdbcProcessingStore#complete(java.sql.Connection, Claim.Acquired, String)} that
 * means rolling back the transaction, which is what keeps the effect single.
 */
public final class LeaseLostException extends ProcessingStoreException {
  private static final long serialVersionUID = 1L;

  /** The record's scope. */
  private final String scope;
  /** The record's event ID. */
  private final String eventId;

  /**
   * Creates the exception.
   *
   * @param scope the record's scope
   * @param eventId the record's event ID
   */
  public LeaseLostException(String scope, String eventId) {
    super("lease lost for (" + scope + ", " + eventId + "): taken over by another consumer after it"
        + " expired, or already done; undo the work", null);
    this.scope = scope;
    this.eventId = eventId;
  }

  /** {@return the record's scope} */
  public String scope() {
    return scope;
  }

  /** {@return the record's event ID} */
  public String eventId() {
    return eventId;
  }
}

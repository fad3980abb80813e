package io.github.resilienthttp.server;

/**
 * A request tried to complete a record with a lease it no longer holds: the lease expired and another
 * request took the key over. The caller must undo its work (roll the transaction back), which is what
 * keeps the effect single.
 */
public final class LeaseLostException extends IdempotencyStoreException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param scope the record's scope
   * @param key the record's key
   */
  public LeaseLostException(String scope, String key) {
    super("lease lost for key " + key + " in " + scope + ": taken over after it expired; undo the work", null);
  }
}

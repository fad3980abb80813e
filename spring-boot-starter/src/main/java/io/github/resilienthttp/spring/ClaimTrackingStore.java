package io.github.resilienthttp.spring;

import io.github.resilienthttp.callbacks.Claim;
import io.github.resilienthttp.callbacks.JdbcProcessingStore;
import io.github.resilienthttp.callbacks.ProcessingStore;
import java.time.Duration;

/**
 * The JDBC store as the {@link io.github.resilienthttp.callbacks.CallbackReceiver} sees it from
 * {@link TransactionalCallbackReceiver}: claims and releases go to the store on their own connections
 * (a claim must commit at once, so that a concurrent delivery sees it); the claim a delivery acquired
 * is remembered on its thread so that the handler can complete it inside the application's
 * transaction, after which the receiver's own {@code complete} has nothing left to do.
 */
final class ClaimTrackingStore implements ProcessingStore {
  private final JdbcProcessingStore store;
  /** The claim acquired on this thread and not yet completed or released, and whether it completed. */
  private final ThreadLocal<Tracked> current = new ThreadLocal<>();

  private static final class Tracked {
    final Claim.Acquired claim;
    boolean completed;

    Tracked(Claim.Acquired claim) {
      this.claim = claim;
    }
  }

  ClaimTrackingStore(JdbcProcessingStore store) {
    this.store = store;
  }

  JdbcProcessingStore store() {
    return store;
  }

  @Override
  public Claim claim(String scope, String eventId, Duration lease) {
    Claim claim = store.claim(scope, eventId, lease);
    if (claim instanceof Claim.Acquired acquired) current.set(new Tracked(acquired));
    return claim;
  }

  /** The claim this thread's delivery holds, for the handler's transaction. */
  Claim.Acquired acquired() {
    Tracked t = current.get();
    if (t == null) throw new IllegalStateException("no claim acquired on this thread");
    return t.claim;
  }

  /** Marks this thread's claim completed in the application's transaction (which committed). */
  void completedInTransaction() {
    current.get().completed = true;
  }

  @Override
  public void complete(Claim.Acquired claim, String result) {
    Tracked t = current.get();
    current.remove();
    if (t != null && t.claim.equals(claim) && t.completed) return; // committed with the handler's work
    store.complete(claim, result);
  }

  @Override
  public void release(Claim.Acquired claim) {
    current.remove();
    store.release(claim);
  }

  @Override
  public Duration retention() {
    return store.retention();
  }

  @Override
  public String toString() {
    return "ClaimTrackingStore{" + store + "}";
  }
}

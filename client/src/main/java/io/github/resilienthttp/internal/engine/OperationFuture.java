package io.github.resilienthttp.internal.engine;

import java.util.concurrent.CompletableFuture;
import okhttp3.Response;

/**
 * The future of an async (or hedged) operation. Completing it from outside ({@code cancel},
 * {@code orTimeout}, {@code complete}, {@code completeExceptionally}) cancels the operation: it
 * stops waiting, gives its permits back, and a response that arrives later is closed. The driver
 * completes it with the {@code ...FromOperation} methods, which do not call back. A future derived
 * from it ({@code thenApply}, ...) is another future: completing that one does not reach here, so
 * callers cancel the future the SDK returned. Not API.
 */
public final class OperationFuture extends CompletableFuture<Response> {
  private final Runnable cancelOperation;

  /**
   * A future whose completion from outside runs {@code cancelOperation}.
   *
   * @param cancelOperation stops the operation; called at most once per outside completion
   */
  public OperationFuture(Runnable cancelOperation) {
    this.cancelOperation = cancelOperation;
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean canceled = super.cancel(mayInterruptIfRunning);
    if (canceled) {
      cancelOperation.run();
    }
    return canceled;
  }

  @Override
  public boolean complete(Response value) {
    boolean completed = super.complete(value);
    if (completed) {
      cancelOperation.run();
    }
    return completed;
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    boolean completed = super.completeExceptionally(ex);
    if (completed) {
      cancelOperation.run();
    }
    return completed;
  }

  /** Completes with the operation's response; false when completed (or cancelled) before. */
  public boolean completeFromOperation(Response response) {
    return super.complete(response);
  }

  /** Fails with the operation's failure; false when completed (or cancelled) before. */
  public boolean failFromOperation(Throwable e) {
    return super.completeExceptionally(e);
  }

  /** Cancels the future itself; true when it is cancelled (now or before). */
  public boolean cancelFromOperation() {
    return super.cancel(false) || isCancelled();
  }
}

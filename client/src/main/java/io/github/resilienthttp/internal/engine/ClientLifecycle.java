package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.ResilientHttpException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a client is open, and what runs on it: every run of attempts, plain call and 202 wait
 * {@linkplain #enter enters} before it starts and {@linkplain #exit exits} when it ends, so that
 * {@link #close(boolean)} reaches each of them. Closing is one-way: open, then closed (running work
 * may finish its current attempt), then closed now (running work is cancelled); each step once.
 * Thread-safe: a lock-free set and a state word. Not API.
 */
public final class ClientLifecycle {
  private static final Logger log = LoggerFactory.getLogger(ClientLifecycle.class);
  /** The reason of every failure caused by closing the client. */
  public static final String REASON = "client-closed";
  private static final int OPEN = 0;
  private static final int CLOSED = 1;
  private static final int CLOSED_NOW = 2;

  /** Something that runs on the client and must hear that it closes. */
  public interface Stoppable {
    /**
     * The client closes. Called once per mode, on the closing thread; must not block.
     *
     * @param now {@code false}: start nothing new (no attempt, retry, poll), let what is in
     *     flight finish; {@code true}: also cancel what is in flight
     */
    void clientClosing(boolean now);
  }

  private final Set<Stoppable> running = ConcurrentHashMap.newKeySet();
  private final AtomicInteger state = new AtomicInteger(OPEN);

  /** {@return whether {@link #close(boolean)} was called} */
  public boolean isClosed() {
    return state.get() != OPEN;
  }

  /**
   * Registers {@code s} before it starts.
   *
   * @throws IllegalStateException ("client closed") when the client is closed: nothing starts
   */
  public void enter(Stoppable s) {
    if (isClosed()) {
      throw closedError();
    }
    running.add(s);
    // Checked again after adding: a close() that set its flag after this check iterates after
    // the add, so it sees s; one that set it before is seen here.
    if (isClosed()) {
      running.remove(s);
      throw closedError();
    }
  }

  /** Forgets {@code s}, which ended; idempotent. */
  public void exit(Stoppable s) {
    running.remove(s);
  }

  /**
   * Registers a plain call on {@code ResilientHttpClient.okHttpClient()}, running as {@code op}.
   *
   * @return what to {@link #exit} when the call's attempts ended
   * @throws ResilientHttpException (reason {@value #REASON}) when the client is closed: nothing is
   *     sent. An {@code IOException} rather than {@code IllegalStateException}: OkHttp expects
   *     interceptors to throw {@code IOException}, and passes anything else to its dispatcher
   *     thread's uncaught-exception handler for {@code enqueue}d calls.
   */
  public Stoppable enterPlainCall(Execution op, Call call) throws ResilientHttpException {
    Stoppable s = now -> {
      if (now) {
        op.cancel();
        call.cancel();
      } else {
        op.cancelSignal().complete(null); // wakes its backoff or bulkhead wait; no new attempt
      }
    };
    try {
      enter(s);
    } catch (IllegalStateException e) {
      throw new ResilientHttpException("client closed: no new calls (nothing was sent)",
          op.key(), op.spec().keySent(), 0, REASON, e);
    }
    return s;
  }

  /**
   * Closes: from now on {@link #enter} refuses; every registered {@link Stoppable} hears it.
   * What a {@code Stoppable} throws is logged and the others still hear it.
   *
   * @param now whether work in flight is cancelled too
   * @return whether this call changed the state (false for a repeated close)
   */
  public boolean close(boolean now) {
    int target = now ? CLOSED_NOW : CLOSED;
    int before;
    do {
      before = state.get();
      if (before >= target) {
        return false;
      }
    } while (!state.compareAndSet(before, target));
    for (Stoppable s : running) {
      try {
        s.clientClosing(now);
      } catch (RuntimeException e) { // NOPMD: user code (listeners) runs in the wake-up; go on
        log.error("closing the client: stopping {} threw; the close goes on", s, e);
      }
    }
    return true;
  }

  /** {@return how many runs, plain calls and waits are registered now (for tests)} */
  public int runningCount() {
    return running.size();
  }

  /** The error of everything started after close. */
  public static IllegalStateException closedError() {
    return new IllegalStateException("client closed: ResilientHttpClient.close() was called, so it"
        + " starts no new operations; build a new client");
  }
}

package io.github.resilienthttp.internal.engine;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a client is open, and what waits on it. Closing is one-way: open, then closed (running
 * work may finish its current attempt), then closed now (running work is cancelled); each step
 * once. Thread-safe: a lock-free set and a state word. Not API.
 *
 * <p>A close must reach two kinds of work, found in two places, so that a healthy call registers
 * nowhere on its way:
 *
 * <ul>
 *   <li>Work that <em>waits</em> (a backoff, a bulkhead or rate-limit wait, a scheduled retry) is
 *       registered here while it waits ({@link #enterWait}), and runs with steps (the 202 wait, an
 *       outcome query, the outbox exit) or hedges for their whole life ({@link #enter}), as is a
 *       pass-through plain call (its call is not watched): a close wakes them, and they end with
 *       the close's failure.
 *   <li>Attempts <em>in flight</em> are the deadline watchdog's (it watches every attempt's call
 *       until its operation is done): {@code closeNow()} cancels them through it
 *       ({@code ClientRuntime.close}). An attempt that starts as the client closes either is seen
 *       there or sees {@link #isClosedNow()} after it joined the watchdog, and cancels itself.
 * </ul>
 *
 * <p>Every start checks {@link #isClosed()}, so nothing new starts on a closed client.
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

  /** {@return whether the client was closed now: work in flight is cancelled} */
  public boolean isClosedNow() {
    return state.get() == CLOSED_NOW;
  }

  /**
   * Registers {@code s} while it waits, unless the client is closed (then it must not wait: the
   * check after the wait ends it). {@link #exit} it when the wait is over.
   *
   * @return whether {@code s} is registered; {@code false} when the client is closed
   */
  public boolean enterWait(Stoppable s) {
    if (isClosed()) {
      return false;
    }
    running.add(s);
    // Checked again after adding, as in enter().
    if (isClosed()) {
      running.remove(s);
      return false;
    }
    return true;
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

  /** {@return how many runs and waits are registered now (for tests)} */
  public int runningCount() {
    return running.size();
  }

  /** The error of everything started after close. */
  public static IllegalStateException closedError() {
    return new IllegalStateException("client closed: ResilientHttpClient.close() was called, so it"
        + " starts no new operations; build a new client");
  }
}

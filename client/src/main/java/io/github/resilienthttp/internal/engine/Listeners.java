package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.AttemptKind;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.OperationResult;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls every registered {@link OperationListener}, shielding the operation from listener bugs:
 * whatever a listener throws, except a {@link VirtualMachineError}, is logged and ignored. Not API.
 */
public final class Listeners {
  private static final Logger log = LoggerFactory.getLogger(Listeners.class);

  private final List<OperationListener> listeners;
  /** Asked several times per operation on the healthy path: a field, not a call on the list. */
  private final boolean empty;

  Listeners(List<OperationListener> listeners) {
    this.listeners = List.copyOf(listeners);
    this.empty = this.listeners.isEmpty();
  }

  boolean isEmpty() {
    return empty;
  }

  private interface Event {
    void send(OperationListener l);
  }

  private void each(String name, Event event) {
    for (OperationListener l : listeners) {
      try {
        event.send(l);
      } catch (VirtualMachineError e) {
        throw e;
      } catch (Throwable e) { // a listener bug of any kind (an AssertionError in a test, say)
        log.warn("listener {} threw from {}; ignored", l, name, e);
      }
    }
  }

  /**
   * Sends an event that the engine does not make itself (an asynchronous operation's wait), with the
   * same guard as the others: a listener that throws is logged and ignored.
   */
  public void send(String name, java.util.function.Consumer<OperationListener> event) {
    if (!empty) {
      each(name, event::accept);
    }
  }

  void operationStarted(Execution op) {
    if (!empty) {
      each("operationStarted", l -> l.operationStarted(op.info()));
    }
  }

  void attemptStarted(Execution op, int attempt, AttemptKind kind) {
    if (!empty) {
      each("attemptStarted", l -> l.attemptStarted(op.info(), attempt, kind));
    }
  }

  void attemptEnded(Execution op, int attempt, AttemptKind kind, int status,
      IOException failure, Decision d, Duration duration) {
    if (!empty) {
      each("attemptEnded", l -> l.attemptEnded(op.info(), attempt, kind, status, failure, d,
          duration));
    }
  }

  void retryScheduled(Execution op, int next, Duration delay, boolean fromRetryAfter) {
    if (!empty) {
      each("retryScheduled", l -> l.retryScheduled(op.info(), next, delay, fromRetryAfter));
    }
  }

  void retryBudgetRefused(Execution op, int attempt) {
    if (!empty) {
      each("retryBudgetRefused", l -> l.retryBudgetRefused(op.info(), attempt));
    }
  }

  void circuitBreakerRejected(Execution op, String name, int attempt) {
    if (!empty) {
      each("circuitBreakerRejected", l -> l.circuitBreakerRejected(op.info(), name, attempt));
    }
  }

  void bulkheadRejected(Execution op, int attempt) {
    if (!empty) {
      each("bulkheadRejected", l -> l.bulkheadRejected(op.info(), attempt));
    }
  }

  void replayDetected(Execution op, int attempt) {
    if (!empty) {
      each("replayDetected", l -> l.replayDetected(op.info(), attempt));
    }
  }

  void inProgress(Execution op, int attempt) {
    if (!empty) {
      each("inProgress", l -> l.inProgress(op.info(), attempt));
    }
  }

  void operationEnded(Execution op, OperationResult result) {
    if (!empty) {
      each("operationEnded", l -> l.operationEnded(op.info(), result));
    }
  }
}

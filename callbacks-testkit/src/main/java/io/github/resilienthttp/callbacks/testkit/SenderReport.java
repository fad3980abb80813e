package io.github.resilienthttp.callbacks.testkit;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What a {@link CallbackSender} run sent and what the receiver answered.
 *
 * <p>Immutable.
 */
public final class SenderReport {
  private final int events;
  private final List<CallbackSender.Delivery> deliveries;

  SenderReport(int events, List<CallbackSender.Delivery> deliveries) {
    this.events = events;
    this.deliveries = List.copyOf(deliveries);
  }

  /** {@return the number of distinct events given to the sender} */
  public int events() {
    return events;
  }

  /** {@return every delivery in plan order} */
  public List<CallbackSender.Delivery> deliveries() {
    return deliveries;
  }

  /**
   * Deliveries of one kind.
   *
   * @param kind the kind
   * @return how many were sent
   */
  public long count(CallbackSender.Kind kind) {
    return deliveries.stream().filter(d -> d.kind() == kind).count();
  }

  /**
   * Deliveries of one kind whose last answer had this status.
   *
   * @param kind the kind
   * @param status the HTTP status
   * @return how many
   */
  public long count(CallbackSender.Kind kind, int status) {
    return deliveries.stream().filter(d -> d.kind() == kind && d.finalStatus() == status).count();
  }

  /** {@return the number of HTTP requests made, retries included} */
  public int requests() {
    return deliveries.stream().mapToInt(CallbackSender.Delivery::attempts).sum();
  }

  /** {@return how often each status was the last answer of a delivery, I/O failures as -1} */
  public Map<Integer, Long> finalStatuses() {
    Map<Integer, Long> m = new TreeMap<>();
    for (CallbackSender.Delivery d : deliveries) m.merge(d.finalStatus(), 1L, Long::sum);
    return Collections.unmodifiableMap(m);
  }

  /** {@return IDs of events none of whose genuine deliveries was acknowledged} */
  public Set<String> unacknowledgedEvents() {
    Set<String> all = new TreeSet<>();
    Set<String> acked = new TreeSet<>();
    for (CallbackSender.Delivery d : deliveries) {
      if (!d.kind().genuine()) continue;
      all.add(d.eventId());
      if (d.acknowledged()) acked.add(d.eventId());
    }
    all.removeAll(acked);
    return Collections.unmodifiableSet(all);
  }

  /** {@return true when any hostile delivery (stale replay, forgery) got a 2xx} */
  public boolean anyHostileAccepted() {
    return deliveries.stream().anyMatch(d -> !d.kind().genuine() && d.acknowledged());
  }

  @Override
  public String toString() {
    return "SenderReport{events=" + events + ", deliveries=" + deliveries.size() + ", requests="
        + requests() + ", finalStatuses=" + finalStatuses() + "}";
  }
}

package io.github.resilienthttp;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where operations that ended without a definite outcome (outcome unknown, retry budget, breaker,
 * bulkhead, deadline, a wait that stopped) park their intent, for an {@link OutboxResumer} to resume
 * later with the same key, instead of being dropped or retried for ever. Entries are keyed by the
 * intent's idempotency key: parking the same key again replaces its entry. Park with
 * {@link Operation#parkIndefiniteOutcomes(Outbox)}.
 *
 * <p>An SPI: {@link #inMemory()} is for tests and single processes; a durable outbox (a database
 * table written in the same transaction as the business record) implements these four methods.
 * Implementations must be thread-safe.
 */
public interface Outbox {

  /**
   * Stores {@code entry}, replacing one with the same key.
   *
   * @param entry the entry
   */
  void park(OutboxEntry entry);

  /**
   * Up to {@code max} entries due at {@code now}, oldest due first.
   *
   * @param now the time
   * @param max at most this many
   * @return the entries
   */
  List<OutboxEntry> due(Instant now, int max);

  /**
   * Removes the entry of {@code idempotencyKey}, if any.
   *
   * @param idempotencyKey the intent's key
   */
  void remove(String idempotencyKey);

  /** {@return how many entries are parked} */
  int size();

  /** {@return a new outbox in memory, lost with the process} */
  static Outbox inMemory() {
    return new Outbox() {
      private final Map<String, OutboxEntry> entries = new ConcurrentHashMap<>();

      @Override
      public void park(OutboxEntry entry) {
        entries.put(entry.token().idempotencyKey(), entry);
      }

      @Override
      public List<OutboxEntry> due(Instant now, int max) {
        List<OutboxEntry> out = new ArrayList<>();
        for (OutboxEntry e : entries.values()) {
          if (!e.dueAt().isAfter(now)) {
            out.add(e);
          }
        }
        out.sort(Comparator.comparing(OutboxEntry::dueAt));
        return out.size() > max ? List.copyOf(out.subList(0, max)) : out;
      }

      @Override
      public void remove(String idempotencyKey) {
        entries.remove(idempotencyKey);
      }

      @Override
      public int size() {
        return entries.size();
      }

      @Override
      public String toString() {
        return "Outbox.inMemory(" + entries.size() + " parked)";
      }
    };
  }
}

package io.github.resilienthttp.internal.outbox;

import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutboxClaim;
import io.github.resilienthttp.OutboxEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * {@link Outbox#inMemory()}: the same claim, lease and fence rules as the JDBC outbox, in a map
 * guarded by this object's monitor (every method is short and does no I/O). A claimed entry is due
 * again when its lease runs out, exactly as the JDBC outbox moves {@code next_due_at} to the lease's
 * end. Not API.
 */
public final class InMemoryOutbox implements Outbox {
  /** An entry with its current lease ({@code leaseToken} null when unclaimed). */
  private record Slot(OutboxEntry entry, Instant dueAt, String leaseToken) {}

  private final Map<String, Slot> slots = new HashMap<>();

  @Override
  public synchronized void park(OutboxEntry entry) {
    slots.put(entry.token().idempotencyKey(), new Slot(entry, entry.dueAt(), null));
  }

  @Override
  public synchronized List<OutboxEntry> due(Instant now, int max) {
    List<OutboxEntry> out = new ArrayList<>();
    for (Slot s : dueSlots(now, max)) {
      out.add(s.entry());
    }
    return out;
  }

  private List<Slot> dueSlots(Instant now, int max) {
    if (max < 0) {
      throw new IllegalArgumentException("max: " + max + " is negative");
    }
    List<Slot> out = new ArrayList<>();
    for (Slot s : slots.values()) {
      if (!s.dueAt().isAfter(now)) {
        out.add(s);
      }
    }
    out.sort(Comparator.comparing(Slot::dueAt)
        .thenComparing(s -> s.entry().token().idempotencyKey()));
    return out.size() > max ? List.copyOf(out.subList(0, max)) : out;
  }

  @Override
  public synchronized List<OutboxClaim> claim(Instant now, int max, Duration lease) {
    Outbox.checkLease(lease);
    Instant until = now.plus(lease);
    String token = UUID.randomUUID().toString();
    List<OutboxClaim> out = new ArrayList<>();
    for (Slot s : dueSlots(now, max)) {
      String key = s.entry().token().idempotencyKey();
      slots.put(key, new Slot(s.entry(), until, token));
      out.add(new OutboxClaim(s.entry(), token, until));
    }
    return out;
  }

  @Override
  public synchronized boolean renew(OutboxClaim claim, Instant now, Duration lease) {
    Outbox.checkLease(lease);
    Slot s = held(claim);
    if (s == null) {
      return false;
    }
    slots.put(claim.idempotencyKey(), new Slot(s.entry(), now.plus(lease), s.leaseToken()));
    return true;
  }

  @Override
  public synchronized boolean complete(OutboxClaim claim) {
    return held(claim) != null && slots.remove(claim.idempotencyKey()) != null;
  }

  @Override
  public synchronized boolean reschedule(OutboxClaim claim, OutboxEntry next) {
    if (!next.token().idempotencyKey().equals(claim.idempotencyKey())) {
      throw new IllegalArgumentException("next: key " + next.token().idempotencyKey()
          + " is not the claimed key " + claim.idempotencyKey());
    }
    if (held(claim) == null) {
      return false;
    }
    slots.put(claim.idempotencyKey(), new Slot(next, next.dueAt(), null));
    return true;
  }

  private Slot held(OutboxClaim claim) {
    Slot s = slots.get(claim.idempotencyKey());
    return s != null && claim.token().equals(s.leaseToken()) ? s : null;
  }

  @Override
  public synchronized void remove(String idempotencyKey) {
    slots.remove(idempotencyKey);
  }

  @Override
  public synchronized int size() {
    return slots.size();
  }

  @Override
  public synchronized Optional<Instant> oldestParkedAt() {
    return slots.values().stream().map(s -> s.entry().parkedAt()).min(Comparator.naturalOrder());
  }

  @Override
  public synchronized String toString() {
    return "Outbox.inMemory(" + slots.size() + " parked)";
  }
}

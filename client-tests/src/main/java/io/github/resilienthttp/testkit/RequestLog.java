package io.github.resilienthttp.testkit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Headers;

/**
 * What one {@link IdempotentTestServer} saw: every request that reached its dispatcher (with its
 * fault, outcome and status) and the counters of {@link ServerStats}. Not durable: a restarted server
 * starts a new log. Thread-safe: one lock; a {@link #reset()} starts a new generation, and requests
 * of an older one no longer count. Not API.
 */
final class RequestLog {

  /** The counters of {@link ServerStats} that the log keeps (effects live in the ledger). */
  enum Counter {
    REPLAY,
    IN_PROGRESS,
    MISMATCH,
    MISSING_KEY,
    RECOVERY
  }

  private final Object lock = new Object();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger maxInFlight = new AtomicInteger();
  // Guarded by lock.
  private int generation;
  private final List<Entry> requests = new ArrayList<>();
  private final List<String> keysSeen = new ArrayList<>();
  private final int[] counters = new int[Counter.values().length];
  private int faulted;

  /** Logs an arriving request and takes its fault from {@code plan}, in arrival order. */
  Entry arrive(
      String method, String path, Headers headers, String body, String key, FaultPlan plan) {
    synchronized (lock) {
      keysSeen.add(key);
      Fault fault = plan.next();
      if (fault.isFault()) {
        faulted++;
      }
      Entry entry =
          new Entry(generation, requests.size() + 1, method, path, headers, body, key, fault);
      requests.add(entry);
      return entry;
    }
  }

  void count(Entry entry, Counter counter) {
    synchronized (lock) {
      if (entry.generation == generation) {
        counters[counter.ordinal()]++;
      }
    }
  }

  void finish(Entry entry, Outcome outcome, int status) {
    synchronized (lock) {
      entry.outcome = outcome;
      entry.status = status;
    }
  }

  void enter() {
    int now = inFlight.incrementAndGet();
    maxInFlight.accumulateAndGet(now, Math::max);
  }

  void exit() {
    inFlight.decrementAndGet();
  }

  ServerStats stats(int effects) {
    synchronized (lock) {
      return new ServerStats(
          requests.size(),
          effects,
          counters[Counter.REPLAY.ordinal()],
          counters[Counter.IN_PROGRESS.ordinal()],
          counters[Counter.MISMATCH.ordinal()],
          counters[Counter.MISSING_KEY.ordinal()],
          faulted,
          counters[Counter.RECOVERY.ordinal()],
          maxInFlight.get(),
          inFlight.get());
    }
  }

  List<String> keysSeen() {
    synchronized (lock) {
      return Collections.unmodifiableList(new ArrayList<>(keysSeen));
    }
  }

  List<ReceivedRequest> requests() {
    synchronized (lock) {
      List<ReceivedRequest> out = new ArrayList<>(requests.size());
      for (Entry e : requests) {
        out.add(e.snapshot());
      }
      return List.copyOf(out);
    }
  }

  void reset() {
    synchronized (lock) {
      generation++;
      requests.clear();
      keysSeen.clear();
      java.util.Arrays.fill(counters, 0);
      faulted = 0;
      maxInFlight.set(0);
    }
  }

  /** One request; outcome and status are guarded by the log's lock. */
  static final class Entry {
    final int generation;
    final int sequence;
    final String method;
    final String path;
    final Headers headers;
    final String body;
    final String key;
    final Fault fault;
    Outcome outcome = Outcome.PENDING;
    int status = -1;

    Entry(
        int generation,
        int sequence,
        String method,
        String path,
        Headers headers,
        String body,
        String key,
        Fault fault) {
      this.generation = generation;
      this.sequence = sequence;
      this.method = method;
      this.path = path;
      this.headers = headers;
      this.body = body;
      this.key = key;
      this.fault = fault;
    }

    ReceivedRequest snapshot() {
      return new ReceivedRequest(
          sequence, method, path, headers, body, key, fault, outcome, status);
    }
  }
}

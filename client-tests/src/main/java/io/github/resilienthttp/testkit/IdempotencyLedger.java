package io.github.resilienthttp.testkit;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The durable state of an {@link IdempotentTestServer}: its idempotency records (key → request
 * fingerprint, state, lease, the response to replay) and its business writes ({@link Effect}s, each
 * stored with the key of the request that made it, as a payment row with a unique {@code
 * idempotency_key} column). What a database would hold: it survives a {@link CrashPoint crash} and
 * a {@link IdempotentTestServer#restart() restart}; pass one ledger to several servers in turn with
 * {@link IdempotentTestServer.Builder#ledger(IdempotencyLedger)}.
 *
 * <h2>Records</h2>
 *
 * A key is claimed atomically: the first request inserts an in-progress record with a lease; a
 * later request with the same key gets 422 when its fingerprint differs, 409 while the record is in
 * progress and its lease runs, the recorded response once it is completed, and, after the lease
 * expired, takes the record over (see {@link CrashPoint} for the recovery). A completed record is
 * forgotten once the server's retention has passed since it was completed: a later request with its
 * key is then new.
 *
 * <p>Thread-safe: one lock guards all state; no method blocks. The public methods are for tests;
 * the rest is the server's.
 */
public final class IdempotencyLedger {

  /** The state of one key's record. */
  public enum RecordState {
    /** No record (never claimed, released after a handler failure, or forgotten). */
    ABSENT,
    /** Claimed; the business write may or may not have happened. */
    IN_PROGRESS,
    /** Done: the response to replay is recorded. */
    COMPLETED
  }

  private final Object lock = new Object();
  // Guarded by lock.
  private final Map<String, Record> records = new HashMap<>();
  private final List<Effect> effects = new ArrayList<>();
  private int epoch;
  private long tokens;

  /** An empty ledger. */
  public IdempotencyLedger() {}

  /**
   * The business writes, in the order they were made.
   *
   * @return an immutable snapshot
   */
  public List<Effect> effects() {
    synchronized (lock) {
      return List.copyOf(effects);
    }
  }

  /**
   * The number of business writes.
   *
   * @return the count since creation or the last {@link #clear()}
   */
  public int effectCount() {
    synchronized (lock) {
      return effects.size();
    }
  }

  /**
   * The state of a key's record, ignoring retention (a record past its retention is forgotten
   * when the next request with its key arrives).
   *
   * @param key the key header value, verbatim
   * @return the state
   */
  public RecordState state(String key) {
    Objects.requireNonNull(key, "key");
    synchronized (lock) {
      Record r = records.get(key);
      if (r == null) {
        return RecordState.ABSENT;
      }
      return r.response == null ? RecordState.IN_PROGRESS : RecordState.COMPLETED;
    }
  }

  /**
   * Forgets every record and business write. Requests that started before keep running but no
   * longer change this ledger.
   */
  public void clear() {
    synchronized (lock) {
      epoch++;
      records.clear();
      effects.clear();
    }
  }

  @Override
  public String toString() {
    synchronized (lock) {
      return "IdempotencyLedger[records=" + records.size() + ", effects=" + effects.size() + "]";
    }
  }

  // ---------------------------------------------------------------- the server's side

  /** The current epoch; writes made with an older one (begun before a clear) are dropped. */
  int epoch() {
    synchronized (lock) {
      return epoch;
    }
  }

  /**
   * Claims {@code key} for a request with {@code fingerprint} at {@code nowNanos}.
   *
   * @param checkFingerprint false for {@link Flaw#FINGERPRINT_NOT_CHECKED}
   * @param insert false for {@link Flaw#CHECK_THEN_INSERT_RACE}: look only, claim nothing
   * @param retentionNanos how long a completed record is kept, or -1 for ever
   */
  Claim claim(
      int epoch,
      String key,
      String fingerprint,
      long nowNanos,
      long leaseNanos,
      long retentionNanos,
      boolean checkFingerprint,
      boolean insert) {
    synchronized (lock) {
      if (epoch != this.epoch) {
        return new Claim(Claim.Kind.NEW, -1, null, null);
      }
      Record r = records.get(key);
      if (r != null
          && r.response != null
          && retentionNanos >= 0
          && nowNanos - r.completedAtNanos >= retentionNanos) {
        records.remove(key);
        r = null;
      }
      if (r == null) {
        if (!insert) {
          return new Claim(Claim.Kind.NEW, -1, null, null);
        }
        Record fresh = new Record(fingerprint, ++tokens, nowNanos + leaseNanos, effects.size());
        records.put(key, fresh);
        return new Claim(Claim.Kind.NEW, fresh.token, null, null);
      }
      if (checkFingerprint && !r.fingerprint.equals(fingerprint)) {
        return new Claim(Claim.Kind.MISMATCH, -1, null, null);
      }
      if (r.response != null) {
        return new Claim(Claim.Kind.REPLAY, -1, r.response, null);
      }
      if (nowNanos - r.leaseUntilNanos < 0 || !insert) {
        return new Claim(Claim.Kind.IN_PROGRESS, -1, null, null);
      }
      // The lease expired: its owner died (or overran it). Take over, fencing the owner out, and
      // look for the business write the owner may have made under this record.
      r.token = ++tokens;
      r.leaseUntilNanos = nowNanos + leaseNanos;
      Effect written = null;
      for (int i = r.effectsBefore; i < effects.size(); i++) {
        if (key.equals(effects.get(i).key())) {
          written = effects.get(i);
          break;
        }
      }
      return written != null
          ? new Claim(Claim.Kind.RECOVER, r.token, null, written)
          : new Claim(Claim.Kind.NEW, r.token, null, null);
    }
  }

  /**
   * Inserts (or replaces) an in-progress record without any check: the late insert of {@link
   * Flaw#CHECK_THEN_INSERT_RACE}.
   */
  long forceClaim(int epoch, String key, String fingerprint, long nowNanos, long leaseNanos) {
    synchronized (lock) {
      if (epoch != this.epoch) {
        return -1;
      }
      Record fresh = new Record(fingerprint, ++tokens, nowNanos + leaseNanos, effects.size());
      records.put(key, fresh);
      return fresh.token;
    }
  }

  /**
   * The business write of a request. Refused (null) when the record was taken over since the
   * caller claimed it with {@code token}; {@code token} -1 means "no record" (keyless, or a flaw).
   * Returns the effect, numbered from 1; after a {@link #clear()} the number is given but nothing
   * is stored.
   */
  Effect write(int epoch, long token, String key, String method, String path, String body) {
    synchronized (lock) {
      if (epoch != this.epoch) {
        return new Effect(effects.size() + 1, key, method, path, body);
      }
      if (token >= 0) {
        Record r = records.get(key);
        if (r == null || r.token != token) {
          return null;
        }
      }
      Effect effect = new Effect(effects.size() + 1, key, method, path, body);
      effects.add(effect);
      return effect;
    }
  }

  /** Marks the record done with {@code response}; false when it was taken over meanwhile. */
  boolean complete(int epoch, long token, String key, ServerResponse response, long nowNanos) {
    synchronized (lock) {
      if (epoch != this.epoch) {
        return false;
      }
      Record r = records.get(key);
      if (r == null || (token >= 0 && r.token != token)) {
        return false;
      }
      r.response = response;
      r.completedAtNanos = nowNanos;
      return true;
    }
  }

  /** Records a completed key unconditionally (the late insert of a flawed server). */
  void put(int epoch, String key, String fingerprint, ServerResponse response, long nowNanos) {
    synchronized (lock) {
      if (epoch != this.epoch) {
        return;
      }
      Record r = new Record(fingerprint, ++tokens, nowNanos, effects.size());
      r.response = response;
      r.completedAtNanos = nowNanos;
      records.put(key, r);
    }
  }

  /** Forgets the record claimed with {@code token} (the request failed before completing it). */
  void release(int epoch, long token, String key) {
    synchronized (lock) {
      if (epoch != this.epoch) {
        return;
      }
      Record r = records.get(key);
      if (r != null && r.response == null && r.token == token) {
        records.remove(key);
      }
    }
  }

  /** Forgets a key at once (for {@link Flaw#FORGETS_KEYS_AT_ONCE}). */
  void forget(int epoch, String key) {
    synchronized (lock) {
      if (epoch == this.epoch) {
        records.remove(key);
      }
    }
  }

  /** The result of {@link #claim}. */
  record Claim(Kind kind, long token, ServerResponse response, Effect written) {
    enum Kind {
      /** Execute: the caller holds the record with {@code token} (or, with -1, none). */
      NEW,
      /** Answer the recorded {@code response}. */
      REPLAY,
      /** 409. */
      IN_PROGRESS,
      /** 422. */
      MISMATCH,
      /** Lease taken over and the business write {@code written} found: complete from it. */
      RECOVER
    }
  }

  /** One key's record; all fields guarded by the ledger lock. */
  private static final class Record {
    final String fingerprint;
    final int effectsBefore;
    long token;
    long leaseUntilNanos;
    ServerResponse response;
    long completedAtNanos;

    Record(String fingerprint, long token, long leaseUntilNanos, int effectsBefore) {
      this.fingerprint = fingerprint;
      this.token = token;
      this.leaseUntilNanos = leaseUntilNanos;
      this.effectsBefore = effectsBefore;
    }
  }
}

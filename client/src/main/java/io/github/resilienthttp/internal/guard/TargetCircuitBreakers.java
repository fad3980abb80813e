package io.github.resilienthttp.internal.guard;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilienthttp.TimeSource;
import io.github.resilienthttp.internal.engine.DurationMath;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.HttpUrl;

/**
 * Finds the resilience4j {@link CircuitBreaker} for a request: one per target
 * ({@code scheme://host:port}) from a registry, or a single breaker for everything. Not API.
 *
 * <p>The number of targets is bounded: at most {@link #MAX_TARGETS} breakers are kept. A new target
 * beyond that evicts the least recently used one, from this map and from the registry, so a client
 * that calls many hosts (one per tenant, say) does not keep a breaker for each for ever. An evicted
 * target that comes back starts with a new, closed breaker: its failure history is forgotten, which
 * is what "idle" should mean for a breaker. Recency is counted in <em>generations</em>: a
 * generation ends when a new target is added, and a target remembers the last generation in which
 * it was asked for. An operation on a known target therefore reads three fields and writes
 * nothing shared (no clock read either), except the first time it asks in a generation; eviction
 * picks a target of the oldest generation. A target is never handed out once the lookup knows it
 * was evicted, so one name has one breaker in use at a time.
 *
 * <p>It also remembers when the SDK saw each breaker open, to tell callers how long it stays open.
 * It deliberately registers no event consumer on the breakers: resilience4j builds an event object
 * (with a timestamp) for every recorded call as soon as any consumer exists, which would cost every
 * attempt a few hundred bytes.
 */
public final class TargetCircuitBreakers {
  /** The most per-target breakers kept (see the class comment). */
  static final int MAX_TARGETS = 1024;

  private final CircuitBreakerRegistry registry;
  /** Whether the SDK made the registry, so that it alone records in its breakers. */
  private final boolean owned;
  private final int maxTargets;
  private final Target single;
  private final Map<String, Target> byTarget = new ConcurrentHashMap<>();
  /** Most clients call one target: remembering the last one avoids building its name each time. */
  private volatile Target last;
  /**
   * The current generation of recency (see the class comment); advanced when a target is added.
   * Atomic so that it never goes back: a new target then never ranks older than a target in use.
   */
  private final AtomicLong generation = new AtomicLong();
  /** See {@link #afterLookupForTests}; null but in tests. */
  private volatile Runnable afterLookup;
  /** See {@link #afterMarkForTests}; null but in tests. */
  private volatile Runnable afterMark;

  /** A breaker and what the SDK saw of it. */
  public static final class Target {
    private final CircuitBreaker breaker;
    /** Skips successes while the window is full of them; null unless the SDK owns the breaker. */
    private final FullHealthyWindow window;
    private final String scheme;
    private final String host;
    private final int port;
    private volatile CircuitBreaker.State lastSeen = CircuitBreaker.State.CLOSED;
    /**
     * The last generation in which an operation asked for this target, for eviction. A new target
     * starts in the generation its addition began, the newest, so that a concurrent eviction never
     * takes it for the least recently used before its first operation marks it.
     */
    private volatile long usedInGeneration;
    /**
     * Set once the target was evicted: its breaker has left the registry and the target leaves the
     * map. A lookup that found it just before then looks again (see {@link #forUrl}).
     */
    private volatile boolean evicted;
    private volatile long openedAtMillis = -1;

    Target(CircuitBreaker breaker, boolean owned, String scheme, String host, int port,
        long generation) {
      this.breaker = breaker;
      this.usedInGeneration = generation;
      this.window = owned ? FullHealthyWindow.of(breaker) : null;
      this.scheme = scheme;
      this.host = host;
      this.port = port;
    }

    /** The target's breaker. */
    public CircuitBreaker breaker() {
      return breaker;
    }

    /**
     * Records a healthy answer in the breaker (or skips it where that changes nothing the breaker
     * shows: {@link FullHealthyWindow}).
     *
     * @param nanos how long the attempt took, in nanoseconds, at least 0
     */
    public void recordSuccess(long nanos) {
      if (window != null) {
        window.onSuccess(nanos);
      } else {
        breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
      }
    }

    /**
     * Records a healthy answer of an attempt that started at {@code startNanos} on {@code clock},
     * as {@link #recordSuccess(long)} does; when the shortcut knows the answer fast from
     * {@code longestNanos} ({@link FullHealthyWindow#knownFast}), the clock is read only if the
     * answer is recorded.
     *
     * @param clock the clock that measures the attempt
     * @param startNanos when the attempt started, on {@code clock}
     * @param longestNanos the attempt's time before the deadline that stops its call, in
     *     nanoseconds; {@link Long#MAX_VALUE} when none does
     */
    public void recordSuccess(TimeSource clock, long startNanos, long longestNanos) {
      if (window != null && window.knownFast(longestNanos)) {
        window.onFastSuccess(clock, startNanos);
      } else {
        recordSuccess(Math.max(0, clock.nanoTime() - startNanos));
      }
    }

    /**
     * Records a failed attempt in the breaker.
     *
     * @param nanos how long the attempt took, in nanoseconds, at least 0
     * @param cause what failed
     */
    public void recordError(long nanos, Throwable cause) {
      if (window != null) {
        window.onError(nanos, cause);
      } else {
        breaker.onError(nanos, TimeUnit.NANOSECONDS, cause);
      }
    }

    /** The shortcut of an SDK-owned breaker, or null (for tests). */
    FullHealthyWindow window() {
      return window;
    }

    boolean matches(HttpUrl url) {
      return port == url.port() && host.equals(url.host()) && scheme.equals(url.scheme());
    }

    /** Notes the breaker's state after the SDK recorded a call or was rejected. */
    public void observe() {
      CircuitBreaker.State now = breaker.getState();
      boolean open = now == CircuitBreaker.State.OPEN || now == CircuitBreaker.State.FORCED_OPEN;
      if (open && (lastSeen != now || openedAtMillis < 0)) {
        openedAtMillis = System.currentTimeMillis();
      }
      if (lastSeen != now) {
        lastSeen = now; // written on a change only: every call of the target reads it
      }
    }

    /**
     * Estimated time until an open breaker lets a probe through: its configured wait, counted from
     * when the SDK first saw it open (the full wait when it opened unseen, e.g. by another client).
     */
    public Duration waitLeft() {
      observe();
      Long waitMillis = breaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1);
      long wait = waitMillis == null ? 0 : waitMillis;
      long left = openedAtMillis < 0 ? wait
          : DurationMath.saturatedAdd(openedAtMillis, wait) - System.currentTimeMillis();
      return Duration.ofMillis(Math.max(0, left));
    }
  }

  private TargetCircuitBreakers(CircuitBreakerRegistry registry, boolean owned,
      CircuitBreaker single, int maxTargets) {
    this.registry = registry;
    this.owned = owned;
    this.maxTargets = maxTargets;
    this.single = single == null ? null : new Target(single, false, "", "", -1, 0);
  }

  /**
   * Per-target breakers from a registry the user gave: other code may record in them too, so
   * every outcome is recorded.
   */
  public static TargetCircuitBreakers perTarget(CircuitBreakerRegistry registry) {
    return perTarget(registry, MAX_TARGETS);
  }

  public static TargetCircuitBreakers perTarget(CircuitBreakerRegistry registry, int maxTargets) {
    return new TargetCircuitBreakers(registry, false, null, maxTargets);
  }

  /**
   * Per-target breakers from a new registry of {@code config} that only the SDK records in (its
   * clients derived with {@code newBuilder()} share this object): a success need not be recorded
   * while a window is full of them ({@link FullHealthyWindow}).
   *
   * @param config the breakers' config
   * @return the breakers
   */
  public static TargetCircuitBreakers perTargetOwned(CircuitBreakerConfig config) {
    return new TargetCircuitBreakers(CircuitBreakerRegistry.of(config), true, null, MAX_TARGETS);
  }

  public static TargetCircuitBreakers single(CircuitBreaker breaker) {
    return new TargetCircuitBreakers(null, false, breaker, 1);
  }

  /** The breaker name for a URL: {@code scheme://host:port}. */
  public static String targetName(HttpUrl url) {
    return url.scheme() + "://" + url.host() + ":" + url.port();
  }

  /**
   * The target of {@code url}: the one the map holds for its name, made (and the least recently
   * used evicted, beyond the bound) when there is none. Never a target this method saw marked
   * evicted, so that operations of a target record in the breaker the registry holds for its name.
   * An operation that got its target just before the mark (while an eviction runs: the registry
   * lets go of the breaker, then the target is marked) still records in the evicted breaker, once.
   * Thread-safe.
   *
   * @param url the request's URL
   * @return its target
   */
  public Target forUrl(HttpUrl url) {
    if (single != null) {
      return single;
    }
    Target t = last;
    if (t == null || t.evicted || !t.matches(url)) {
      t = lookUp(url);
    }
    long g = generation.get();
    if (t.usedInGeneration != g) {
      t.usedInGeneration = g;
    }
    return t;
  }

  /**
   * The map's target for {@code url}, made if there is none, and remembered as {@link #last}. An
   * eviction between the map's answer and this method's check of {@link Target#evicted} makes it
   * look again, so the target it returns is not one it saw marked. (An evicted target remembered
   * as {@code last} is passed over by {@link #forUrl}, which checks the mark too.)
   */
  private Target lookUp(HttpUrl url) {
    String name = targetName(url);
    while (true) {
      Target t = byTarget.get(name);
      if (t == null) {
        t = byTarget.computeIfAbsent(name, n -> new Target(registry.circuitBreaker(n), owned,
            url.scheme(), url.host(), url.port(), generation.incrementAndGet()));
        if (byTarget.size() > maxTargets) {
          evictLeastRecentlyUsed(t);
        }
      }
      Runnable hook = afterLookup;
      if (hook != null) {
        hook.run();
      }
      last = t;
      if (!t.evicted) {
        return t;
      }
      // Evicted meanwhile, and its breaker has left the registry (before the mark): take it out of
      // the map rather than wait for the evicting thread, which may be descheduled between the
      // mark and its own removal (a no-op then). A new target for the name gets a new breaker.
      byTarget.remove(name, t);
    }
  }

  /**
   * Evicts targets, least recently used first, until the bound holds again; never {@code keep}.
   * Runs only when a new target pushes the map over its bound: O(targets), on that path alone.
   */
  private synchronized void evictLeastRecentlyUsed(Target keep) {
    while (byTarget.size() > maxTargets) {
      Map.Entry<String, Target> oldest = null;
      for (Map.Entry<String, Target> e : byTarget.entrySet()) {
        Target candidate = e.getValue();
        if (candidate != keep && (oldest == null
            || candidate.usedInGeneration < oldest.getValue().usedInGeneration)) {
          oldest = e;
        }
      }
      if (oldest == null) {
        return;
      }
      // Out of the registry first: a target made for this name once it has left the map then gets a
      // new breaker, never this one, which operations holding the old target may still record in
      // (two targets on one breaker would each keep their own FullHealthyWindow mark).
      Target evicted = oldest.getValue();
      registry.remove(oldest.getKey());
      // Marked only once the registry let go of the breaker: a lookup that sees the mark may take
      // the target out of the map itself, and the name's next target must get a new breaker.
      evicted.evicted = true;
      Runnable hook = afterMark;
      if (hook != null) {
        hook.run();
      }
      byTarget.remove(oldest.getKey(), evicted);
    }
  }

  /**
   * Runs {@code hook} in every lookup that misses the fast path, after the map answered and before
   * the target is remembered (for tests: it forces an eviction into that window).
   */
  void afterLookupForTests(Runnable hook) {
    afterLookup = hook;
  }

  /**
   * Runs {@code hook} in an eviction after it marked the target and before the target leaves the
   * map (for tests: the evicting thread paused there).
   */
  void afterMarkForTests(Runnable hook) {
    afterMark = hook;
  }

  /** The target the fast path remembers, or null (for tests). */
  Target last() {
    return last;
  }

  /** Whether the map holds {@code target} under its name (for tests). */
  boolean inMap(Target target) {
    return byTarget.containsValue(target);
  }

  /** The map's target for {@code name}, or null (for tests). */
  Target targetNamed(String name) {
    return byTarget.get(name);
  }

  /**
   * How many per-target breakers are kept now.
   *
   * @return the number of targets (for tests)
   */
  int size() {
    return byTarget.size();
  }
}

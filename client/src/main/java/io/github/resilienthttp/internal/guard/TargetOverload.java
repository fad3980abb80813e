package io.github.resilienthttp.internal.guard;

import io.github.resilienthttp.TimeSource;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.random.RandomGenerator;
import okhttp3.HttpUrl;

/**
 * A client's adaptive overload state, per target ({@code scheme://host:port}): the throttle's
 * counts, the concurrency limiter and the rate-limit pause, each present only when its option is
 * on. At most {@value #MAX_TARGETS} targets are kept; beyond that an arbitrary other target is
 * forgotten (it starts afresh when used again: a new throttle window, the initial limit). Thread
 * safe. Not API.
 */
public final class TargetOverload {
  static final int MAX_TARGETS = 1024;
  /** The optional dependency of {@link NetflixLimiter}. */
  static final String NETFLIX_ARTIFACT = "com.netflix.concurrency-limits:concurrency-limits-core";

  private final OverloadSettings settings;
  private final TimeSource time;
  private final RandomGenerator random;
  private final ConcurrentHashMap<String, Target> targets = new ConcurrentHashMap<>();

  private TargetOverload(OverloadSettings settings, TimeSource time, RandomGenerator random) {
    this.settings = settings;
    this.time = time;
    this.random = random;
  }

  /**
   * The state for a client's options.
   *
   * @param settings the options
   * @param time the client's clock
   * @param random the client's random source (the throttle's draws)
   * @return the state, or {@code null} when every option is off
   * @throws IllegalStateException when a concurrency limit is asked for and Netflix's
   *     concurrency-limits is not on the class path
   */
  public static TargetOverload of(OverloadSettings settings, TimeSource time,
      RandomGenerator random) {
    if (settings == null || !settings.any()) {
      return null;
    }
    if (settings.concurrencyLimit() != null && !netflixAvailable()) {
      throw new IllegalStateException("concurrencyLimit(" + settings.concurrencyLimit()
          + ") needs " + NETFLIX_ARTIFACT + " (0.5.3) on the class path; add it to the"
          + " application's dependencies");
    }
    return new TargetOverload(settings, time, random);
  }

  /**
   * Whether Netflix's classes can be loaded. Asked here, not in {@link NetflixLimiter}: loading that
   * class already needs them.
   *
   * @return whether the optional dependency is there
   */
  static boolean netflixAvailable() {
    try {
      Class.forName("com.netflix.concurrency.limits.limiter.SimpleLimiter", false,
          TargetOverload.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** One target's state. */
  public static final class Target {
    private final String name;
    private final AdaptiveThrottle throttle;
    private final AdaptiveLimiter limiter;
    private final RatePacing pacing;

    Target(String name, AdaptiveThrottle throttle, AdaptiveLimiter limiter, RatePacing pacing) {
      this.name = name;
      this.throttle = throttle;
      this.limiter = limiter;
      this.pacing = pacing;
    }

    /** {@return {@code scheme://host:port}} */
    public String name() {
      return name;
    }

    /** {@return the throttle, or {@code null} when throttling is off} */
    public AdaptiveThrottle throttle() {
      return throttle;
    }

    /** {@return the concurrency limiter, or {@code null} when the limit is off} */
    public AdaptiveLimiter limiter() {
      return limiter;
    }

    /** {@return the rate-limit pause, or {@code null} when pacing is off} */
    public RatePacing pacing() {
      return pacing;
    }
  }

  /**
   * The state of {@code url}'s target, made on first use.
   *
   * @param url any URL of the target
   * @return the target's state
   */
  public Target forUrl(HttpUrl url) {
    String name = TargetCircuitBreakers.targetName(url);
    Target t = targets.get(name);
    if (t != null) {
      return t;
    }
    t = targets.computeIfAbsent(name, this::newTarget);
    if (targets.size() > MAX_TARGETS) {
      for (String other : targets.keySet()) {
        if (!other.equals(name)) {
          targets.remove(other);
          break;
        }
      }
    }
    return t;
  }

  /**
   * The current concurrency limit of {@code url}'s target.
   *
   * @param url any URL of the target
   * @return the limit, or empty when the limit is off or the target was not used yet
   */
  public OptionalInt limit(HttpUrl url) {
    Target t = targets.get(TargetCircuitBreakers.targetName(url));
    return t == null || t.limiter == null ? OptionalInt.empty() : OptionalInt.of(t.limiter.limit());
  }

  private Target newTarget(String name) {
    return new Target(name,
        settings.throttling() == null ? null
            : new AdaptiveThrottle(settings.throttling(), time, random),
        settings.concurrencyLimit() == null ? null
            : new NetflixLimiter(settings.concurrencyLimit(), time::nanoTime),
        settings.rateLimitPacing() ? new RatePacing(time) : null);
  }
}

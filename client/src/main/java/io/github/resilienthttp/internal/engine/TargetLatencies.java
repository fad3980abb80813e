package io.github.resilienthttp.internal.engine;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Recent attempt latencies per target ({@code scheme://host:port}), for a percentile hedging delay:
 * a ring of the last {@link #RING} latencies of attempts that got an answer, per target, at most
 * {@link #MAX_TARGETS} targets (a new one beyond that evicts an arbitrary other: a target's ring
 * refills within {@link #RING} answers). The percentile is computed from a sorted copy and cached
 * until {@link #RECOMPUTE_EVERY} new latencies arrived, so most operations read a cached value.
 * Thread-safe. Not API.
 */
public final class TargetLatencies {
  static final int RING = 256;
  static final int RECOMPUTE_EVERY = 16;
  static final int MAX_TARGETS = 1024;

  private final Map<String, Ring> byTarget = new ConcurrentHashMap<>();

  /** Records the latency of an attempt to {@code target} that got an answer. */
  public void record(String target, long nanos) {
    Ring ring = byTarget.get(target);
    if (ring == null) {
      if (byTarget.size() >= MAX_TARGETS) {
        Iterator<String> it = byTarget.keySet().iterator();
        if (it.hasNext()) {
          byTarget.remove(it.next());
        }
      }
      ring = byTarget.computeIfAbsent(target, t -> new Ring());
    }
    ring.add(nanos);
  }

  /**
   * The {@code percentile} of {@code target}'s recent latencies.
   *
   * @param minSamples how many latencies must be known
   * @return the latency in nanoseconds, or -1 when fewer than {@code minSamples} are known
   */
  public long percentile(String target, double percentile, int minSamples) {
    Ring ring = byTarget.get(target);
    return ring == null ? -1 : ring.percentile(percentile, minSamples);
  }

  private static final class Ring {
    private final long[] samples = new long[RING];
    private int next;
    private int count;
    private int sinceComputed = Integer.MAX_VALUE;
    private double computedFor = Double.NaN;
    private long computed = -1;

    synchronized void add(long nanos) {
      samples[next] = nanos;
      next = (next + 1) % RING;
      count = Math.min(count + 1, RING);
      if (sinceComputed != Integer.MAX_VALUE) {
        sinceComputed++;
      }
    }

    synchronized long percentile(double p, int minSamples) {
      if (count < minSamples) {
        return -1;
      }
      if (p != computedFor || sinceComputed >= RECOMPUTE_EVERY) {
        long[] sorted = Arrays.copyOf(samples, count);
        Arrays.sort(sorted);
        // Nearest rank: the smallest value with at least p % of the samples at or below it.
        int rank = (int) Math.ceil(p / 100.0 * count);
        computed = sorted[Math.max(0, Math.min(count - 1, rank - 1))];
        computedFor = p;
        sinceComputed = 0;
      }
      return computed;
    }
  }
}

package io.github.resilienthttp.testkit;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * The faults an {@link IdempotentTestServer} applies, one per arriving request: the scripted ones
 * first (FIFO), then, when random mode is on, one drawn from a seeded {@link Random}, else {@link
 * Fault#ok()}. Draws happen under this plan's lock, one per request in arrival order, so the same
 * seed and the same arrival order give the same faults. Thread-safe; not API (the server's
 * {@code script}, {@code randomFaults} and {@code pendingScript} methods are).
 */
final class FaultPlan {
  private final Object lock = new Object();
  private final ArrayDeque<Fault> script = new ArrayDeque<>();
  private Random random;
  private FaultMix mix;

  void append(Fault... faults) {
    Objects.requireNonNull(faults, "faults");
    synchronized (lock) {
      for (Fault f : faults) {
        script.addLast(Objects.requireNonNull(f, "fault"));
      }
    }
  }

  void clearScript() {
    synchronized (lock) {
      script.clear();
    }
  }

  List<Fault> pending() {
    synchronized (lock) {
      return List.copyOf(script);
    }
  }

  void randomFaults(long seed, FaultMix mix) {
    Objects.requireNonNull(mix, "mix");
    synchronized (lock) {
      this.random = new Random(seed);
      this.mix = mix;
    }
  }

  void stopRandomFaults() {
    synchronized (lock) {
      this.random = null;
      this.mix = null;
    }
  }

  /** Clears the script and turns random mode off. */
  void reset() {
    synchronized (lock) {
      script.clear();
      random = null;
      mix = null;
    }
  }

  /** The fault of the next arriving request. */
  Fault next() {
    synchronized (lock) {
      Fault fault = script.pollFirst();
      if (fault == null) {
        fault = random != null ? mix.draw(random) : Fault.ok();
      }
      return fault;
    }
  }
}

package io.github.resilienthttp.testkit;

import java.util.Random;

/**
 * Probabilities for the seeded random fault mode of {@link IdempotentTestServer} (see {@link
 * IdempotentTestServer#randomFaults(long, FaultMix)}).
 *
 * <p>Each probability is in {@code [0, 1]} and their sum must not exceed 1; the remainder is the
 * probability of serving the request normally. Per request the server draws one {@code
 * nextDouble()} from its {@link Random} and picks the fault whose cumulative band contains it, in
 * this order: lost response ({@link Fault#processThenDrop()}), 503, 429, 500, {@link
 * Fault#dropBeforeProcessing()}, {@link Fault#noResponse()}. A 429 draws one extra {@code
 * nextBoolean()} to choose its {@code Retry-After} value, {@code "0"} or {@code "1"} (seconds).
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class FaultMix {

  private final double lostResponse;
  private final double status503;
  private final double status429;
  private final double status500;
  private final double dropBeforeProcessing;
  private final double noResponse;

  private FaultMix(Builder b) {
    this.lostResponse = b.lostResponse;
    this.status503 = b.status503;
    this.status429 = b.status429;
    this.status500 = b.status500;
    this.dropBeforeProcessing = b.dropBeforeProcessing;
    this.noResponse = b.noResponse;
    double sum = total();
    if (sum > 1.0 + 1e-9) {
      throw new IllegalArgumentException("fault probabilities sum to more than 1: " + sum);
    }
  }

  /**
   * Starts a mix with every probability 0.
   *
   * @return a new builder (not thread-safe)
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A mix that never injects a fault.
   *
   * @return a mix with every probability 0
   */
  public static FaultMix none() {
    return builder().build();
  }

  /**
   * Probability of a lost response ({@link Fault#processThenDrop()}).
   *
   * @return the probability, 0..1
   */
  public double lostResponse() {
    return lostResponse;
  }

  /**
   * Probability of an injected 503 without {@code Retry-After}.
   *
   * @return the probability, 0..1
   */
  public double status503() {
    return status503;
  }

  /**
   * Probability of an injected 429 with {@code Retry-After} "0" or "1" (seconds).
   *
   * @return the probability, 0..1
   */
  public double status429() {
    return status429;
  }

  /**
   * Probability of an injected 500.
   *
   * @return the probability, 0..1
   */
  public double status500() {
    return status500;
  }

  /**
   * Probability of {@link Fault#dropBeforeProcessing()}.
   *
   * @return the probability, 0..1
   */
  public double dropBeforeProcessing() {
    return dropBeforeProcessing;
  }

  /**
   * Probability of {@link Fault#noResponse()} (the client must time out).
   *
   * @return the probability, 0..1
   */
  public double noResponse() {
    return noResponse;
  }

  /**
   * Sum of all fault probabilities.
   *
   * @return the probability that a request is faulted, 0..1
   */
  public double total() {
    return lostResponse + status503 + status429 + status500 + dropBeforeProcessing + noResponse;
  }

  /**
   * Predicts the faults that {@link IdempotentTestServer#randomFaults(long, FaultMix)} with this
   * mix and {@code seed} assigns to the first {@code count} requests that find the script empty,
   * in arrival order.
   *
   * @param seed the seed of the {@link Random}
   * @param count number of draws, zero or positive
   * @return an immutable list of {@code count} faults ({@link Fault#ok()} for "no fault")
   * @throws IllegalArgumentException if {@code count} is negative
   */
  public java.util.List<Fault> preview(long seed, int count) {
    if (count < 0) {
      throw new IllegalArgumentException("count must be >= 0: " + count);
    }
    Random random = new Random(seed);
    java.util.List<Fault> faults = new java.util.ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      faults.add(draw(random));
    }
    return java.util.List.copyOf(faults);
  }

  /**
   * Draws one fault. Not thread-safe by itself: the caller must own {@code random} (the server
   * calls this under its lock).
   *
   * @param random the source of randomness
   * @return the drawn fault, {@link Fault#ok()} when no fault is drawn
   */
  Fault draw(Random random) {
    double r = random.nextDouble();
    double band = lostResponse;
    if (r < band) {
      return Fault.processThenDrop();
    }
    band += status503;
    if (r < band) {
      return Fault.status(503);
    }
    band += status429;
    if (r < band) {
      return Fault.status(429, random.nextBoolean() ? "1" : "0");
    }
    band += status500;
    if (r < band) {
      return Fault.status(500);
    }
    band += dropBeforeProcessing;
    if (r < band) {
      return Fault.dropBeforeProcessing();
    }
    band += noResponse;
    if (r < band) {
      return Fault.noResponse();
    }
    return Fault.ok();
  }

  @Override
  public String toString() {
    return "FaultMix{lostResponse=" + lostResponse
        + ", status503=" + status503
        + ", status429=" + status429
        + ", status500=" + status500
        + ", dropBeforeProcessing=" + dropBeforeProcessing
        + ", noResponse=" + noResponse + '}';
  }

  /** Mutable builder for {@link FaultMix}; not thread-safe. */
  public static final class Builder {
    private double lostResponse;
    private double status503;
    private double status429;
    private double status500;
    private double dropBeforeProcessing;
    private double noResponse;

    private Builder() {}

    private static double check(String name, double p) {
      if (!(p >= 0.0 && p <= 1.0)) {
        throw new IllegalArgumentException(name + " must be within [0, 1]: " + p);
      }
      return p;
    }

    /**
     * Sets the probability of a lost response ({@link Fault#processThenDrop()}).
     *
     * @param p probability, 0..1
     * @return this builder
     */
    public Builder lostResponse(double p) {
      this.lostResponse = check("lostResponse", p);
      return this;
    }

    /**
     * Sets the probability of an injected 503.
     *
     * @param p probability, 0..1
     * @return this builder
     */
    public Builder status503(double p) {
      this.status503 = check("status503", p);
      return this;
    }

    /**
     * Sets the probability of an injected 429 with {@code Retry-After} "0" or "1".
     *
     * @param p probability, 0..1
     * @return this builder
     */
    public Builder status429(double p) {
      this.status429 = check("status429", p);
      return this;
    }

    /**
     * Sets the probability of an injected 500.
     *
     * @param p probability, 0..1
     * @return this builder
     */
    public Builder status500(double p) {
      this.status500 = check("status500", p);
      return this;
    }

    /**
     * Sets the probability of {@link Fault#dropBeforeProcessing()}.
     *
     * @param p probability, 0..1
     * @return this builder
     */
    public Builder dropBeforeProcessing(double p) {
      this.dropBeforeProcessing = check("dropBeforeProcessing", p);
      return this;
    }

    /**
     * Sets the probability of {@link Fault#noResponse()}.
     *
     * @param p probability, 0..1
     * @return this builder
     */
    public Builder noResponse(double p) {
      this.noResponse = check("noResponse", p);
      return this;
    }

    /**
     * Builds the mix.
     *
     * @return the immutable mix
     * @throws IllegalArgumentException if the probabilities sum to more than 1
     */
    public FaultMix build() {
      return new FaultMix(this);
    }
  }
}

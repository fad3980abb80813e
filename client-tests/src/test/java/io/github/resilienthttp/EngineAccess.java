package io.github.resilienthttp;

import io.github.resilienthttp.internal.guard.TargetCircuitBreakers;
import okhttp3.HttpUrl;

/** What tests outside this package read of a client's engine state. Test code only. */
public final class EngineAccess {
  private EngineAccess() {}

  /** The hedging percentile the client knows for {@code url}'s target, in ns, or -1. */
  public static long percentile(ResilientHttpClient client, HttpUrl url, double p, int minSamples) {
    return client.runtime().latencies().percentile(TargetCircuitBreakers.targetName(url), p,
        minSamples);
  }
}

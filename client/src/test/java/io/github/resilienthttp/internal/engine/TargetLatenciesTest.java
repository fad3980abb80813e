package io.github.resilienthttp.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TargetLatenciesTest {
  @Test
  void theNearestRankPercentileOfTheRecentLatencies() {
    TargetLatencies latencies = new TargetLatencies();
    assertThat(latencies.percentile("http://a:80", 95, 20)).isEqualTo(-1);
    for (int i = 1; i <= 100; i++) {
      latencies.record("http://a:80", i * 1_000L);
    }
    assertThat(latencies.percentile("http://a:80", 95, 20)).isEqualTo(95_000L);
    assertThat(latencies.percentile("http://a:80", 50, 20)).isEqualTo(50_000L);
    assertThat(latencies.percentile("http://b:80", 50, 20)).isEqualTo(-1);
  }

  @Test
  void tooFewSamplesGiveNoPercentile() {
    TargetLatencies latencies = new TargetLatencies();
    for (int i = 0; i < 19; i++) {
      latencies.record("t", 5);
    }
    assertThat(latencies.percentile("t", 95, 20)).isEqualTo(-1);
    latencies.record("t", 5);
    assertThat(latencies.percentile("t", 95, 20)).isEqualTo(5);
  }

  @Test
  void onlyTheLastRingOfLatenciesCountsAndTheCacheIsRefreshed() {
    TargetLatencies latencies = new TargetLatencies();
    for (int i = 0; i < TargetLatencies.RING; i++) {
      latencies.record("t", 1_000_000L);
    }
    assertThat(latencies.percentile("t", 95, 20)).isEqualTo(1_000_000L);
    for (int i = 0; i < TargetLatencies.RING; i++) {
      latencies.record("t", 10L);
    }
    assertThat(latencies.percentile("t", 95, 20)).isEqualTo(10L);
  }

  @Test
  void theNumberOfTargetsIsBounded() {
    TargetLatencies latencies = new TargetLatencies();
    for (int i = 0; i < 3 * TargetLatencies.MAX_TARGETS; i++) {
      latencies.record("t" + i, 1);
    }
    int known = 0;
    for (int i = 0; i < 3 * TargetLatencies.MAX_TARGETS; i++) {
      if (latencies.percentile("t" + i, 50, 1) >= 0) {
        known++;
      }
    }
    assertThat(known).isLessThanOrEqualTo(TargetLatencies.MAX_TARGETS);
  }
}

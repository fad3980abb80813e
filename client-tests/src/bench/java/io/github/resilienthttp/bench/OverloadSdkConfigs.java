package io.github.resilienthttp.bench;

import io.github.resilienthttp.AdaptiveThrottlingPolicy;
import io.github.resilienthttp.ConcurrencyLimitPolicy;
import io.github.resilienthttp.ResilientHttpClient;
import okhttp3.OkHttpClient;

/** The SDK configs (b) and (c) of {@link OverloadBenchmark}: the defaults plus one overload control. */
final class OverloadSdkConfigs {
  private OverloadSdkConfigs() {}

  /** (b) the SDK's defaults plus {@code adaptiveThrottling(AdaptiveThrottlingPolicy.defaults())}. */
  static OverloadBenchmark.Caller throttled(OkHttpClient okHttp) {
    return OverloadBenchmark.sdk(ResilientHttpClient.wrap(okHttp)
        .adaptiveThrottling(AdaptiveThrottlingPolicy.defaults()).build());
  }

  /** (c) the SDK's defaults plus {@code concurrencyLimit(ConcurrencyLimitPolicy.gradient())}. */
  static OverloadBenchmark.Caller limited(OkHttpClient okHttp) {
    return OverloadBenchmark.sdk(ResilientHttpClient.wrap(okHttp)
        .concurrencyLimit(ConcurrencyLimitPolicy.gradient()).build());
  }

  /** Diagnostic: (b) without the SDK's default circuit breaker, the throttle on its own. */
  static OverloadBenchmark.Caller throttledNoBreaker(OkHttpClient okHttp) {
    return OverloadBenchmark.sdk(ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .adaptiveThrottling(AdaptiveThrottlingPolicy.defaults()).build());
  }

  /** Diagnostic: (c) without the SDK's default circuit breaker, the limit on its own. */
  static OverloadBenchmark.Caller limitedNoBreaker(OkHttpClient okHttp) {
    return OverloadBenchmark.sdk(ResilientHttpClient.wrap(okHttp).noCircuitBreaker()
        .concurrencyLimit(ConcurrencyLimitPolicy.gradient()).build());
  }

  /** (f) the SDK's defaults plus {@code rateLimitPacing(true)}: the 503's RateLimit field paces. */
  static OverloadBenchmark.Caller paced(OkHttpClient okHttp) {
    return OverloadBenchmark.sdk(ResilientHttpClient.wrap(okHttp).rateLimitPacing(true).build());
  }
}

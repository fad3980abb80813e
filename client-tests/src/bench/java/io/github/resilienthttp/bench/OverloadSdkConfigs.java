package io.github.resilienthttp.bench;

import okhttp3.OkHttpClient;

/**
 * The SDK configs (b) and (c) of {@link OverloadBenchmark}, apart so that the program builds before
 * the overload features are merged: until then they report "pending".
 */
final class OverloadSdkConfigs {
  private OverloadSdkConfigs() {}

  /** (b) the SDK's defaults plus {@code adaptiveThrottling(AdaptiveThrottlingPolicy.defaults())}. */
  static OverloadBenchmark.Caller throttled(OkHttpClient okHttp) {
    throw new UnsupportedOperationException("needs adaptiveThrottling (branch h28b)");
  }

  /** (c) the SDK's defaults plus {@code concurrencyLimit(ConcurrencyLimitPolicy.gradient())}. */
  static OverloadBenchmark.Caller limited(OkHttpClient okHttp) {
    throw new UnsupportedOperationException("needs concurrencyLimit (branch h28b)");
  }
}

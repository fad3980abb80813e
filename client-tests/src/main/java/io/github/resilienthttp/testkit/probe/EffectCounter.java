package io.github.resilienthttp.testkit.probe;

import java.io.IOException;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * How the probe counts the server's effects when its answers do not identify them: the number of
 * resources (payments, orders) the server holds now. The probe reads it before and after a check;
 * the difference is the number of executions. Only meaningful when nothing else creates resources
 * meanwhile (a staging server).
 */
@FunctionalInterface
public interface EffectCounter {

  /**
   * The current count.
   *
   * @return the count, or empty when it could not be read
   */
  OptionalLong count();

  /**
   * A {@code GET} of a URL whose answer holds the count: the first integer in its body
   * ({@code 42}, {@code {"count":42}}, {@code {"total": 42, ...}}).
   *
   * @param url the count URL
   * @return the counter
   */
  static EffectCounter url(HttpUrl url) {
    OkHttpClient client = new OkHttpClient.Builder().proxy(java.net.Proxy.NO_PROXY)
        .retryOnConnectionFailure(false).followRedirects(false)
        .connectionPool(new okhttp3.ConnectionPool(0, 1, java.util.concurrent.TimeUnit.MILLISECONDS))
        .build();
    Pattern number = Pattern.compile("-?\\d+");
    return new EffectCounter() {
      @Override
      public OptionalLong count() {
        try (Response r = client.newCall(new Request.Builder().url(url).build()).execute()) {
          if (!r.isSuccessful()) return OptionalLong.empty();
          Matcher m = number.matcher(r.body().string());
          return m.find() ? OptionalLong.of(Long.parseLong(m.group())) : OptionalLong.empty();
        } catch (IOException | RuntimeException e) {
          return OptionalLong.empty();
        }
      }

      @Override
      public String toString() {
        return "count URL " + IdempotencyProbe.shown(url);
      }
    };
  }
}

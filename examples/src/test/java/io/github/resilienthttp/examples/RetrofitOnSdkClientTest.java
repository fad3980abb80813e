package io.github.resilienthttp.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.OperationOptions;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.time.Duration;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.RequestBody;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Test;
import retrofit2.Retrofit;

/** A Retrofit service built on client.okHttpClient() gets the SDK's retries and key, unchanged. */
class RetrofitOnSdkClientTest {

  @Test
  void retrofitCallsAreOperationsWithTheTaggedKey() throws Exception {
    OkHttpClient okHttp = new OkHttpClient();
    try (IdempotentTestServer server = IdempotentTestServer.builder().build().start()) {
      server.script(Fault.status(503), Fault.processThenDrop());
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
          .retryPolicy(RetryPolicy.builder().maxAttempts(4).backoff(Backoff.fixed(Duration.ofMillis(5))).build())
          .build();
      AsyncAndRetrofitExample.PaymentsApi api = new Retrofit.Builder().baseUrl(server.url("/"))
          .client(client.okHttpClient()).build().create(AsyncAndRetrofitExample.PaymentsApi.class);

      retrofit2.Response<ResponseBody> r = api.create(
          RequestBody.create("{\"order\":\"o-1\"}", MediaType.get("application/json")),
          OperationOptions.builder().idempotencyKey("o-1-key").build()).execute();
      try (ResponseBody body = r.body()) {
        assertThat(r.code()).isEqualTo(201);
        assertThat(body.string()).contains("\"effect\":1");
        assertThat(r.headers().get("Idempotent-Replayed")).isEqualTo("true");
      }
      assertThat(server.keysSeen()).containsExactly("o-1-key", "o-1-key", "o-1-key");
      assertThat(server.stats().effects()).isEqualTo(1);
    } finally {
      okHttp.connectionPool().evictAll();
    }
  }
}

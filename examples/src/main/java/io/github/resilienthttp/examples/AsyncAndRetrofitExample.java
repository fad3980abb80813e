package io.github.resilienthttp.examples;

import io.github.resilienthttp.Backoff;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationOptions;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import retrofit2.Retrofit;
import retrofit2.http.Body;
import retrofit2.http.POST;
import retrofit2.http.Tag;

/**
 * The same resilience three more ways, each against a server whose first answer is a 503 and whose
 * second response is lost after the charge:
 *
 * <ol>
 *   <li>{@code Operation.executeAsync()}: a {@link CompletableFuture}; no thread waits in backoff.
 *   <li>Plain OkHttp {@code enqueue} on {@code client.okHttpClient()}: every call is an operation.
 *   <li>A Retrofit service built on {@code client.okHttpClient()}, with a per-call idempotency key
 *       passed as an {@link OperationOptions} tag.
 * </ol>
 *
 * Each charges exactly once. Run: {@code java -cp examples/target/resilient-http-demo.jar
 * io.github.resilienthttp.examples.AsyncAndRetrofitExample}.
 */
public final class AsyncAndRetrofitExample {
  private static final MediaType JSON = MediaType.get("application/json");

  /** A Retrofit service; {@code @Tag} carries the per-call SDK settings. */
  interface PaymentsApi {
    @POST("/payments")
    retrofit2.Call<ResponseBody> create(@Body RequestBody payment, @Tag OperationOptions options);
  }

  private AsyncAndRetrofitExample() {}

  public static void main(String[] args) throws Exception {
    OkHttpClient okHttp = new OkHttpClient();
    try (IdempotentTestServer server = IdempotentTestServer.builder().build().start()) {
      ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
          .retryPolicy(RetryPolicy.builder().maxAttempts(4)
              .backoff(Backoff.exponentialFullJitter(Duration.ofMillis(20), Duration.ofMillis(200)))
              .deadline(Duration.ofSeconds(5)).build())
          .build();

      // 1. executeAsync: the wait between attempts is a scheduled task, not a sleeping thread.
      server.script(Fault.status(503), Fault.processThenDrop());
      CompletableFuture<String> async = client.operation(payment(server, "order-async"))
          .executeAsync()
          .thenApply(AsyncAndRetrofitExample::describe);
      report("executeAsync", async.get(10, TimeUnit.SECONDS), server);

      // 2. Plain OkHttp: newCall(...).enqueue(...) on the SDK's OkHttpClient.
      server.reset();
      server.script(Fault.status(503), Fault.processThenDrop());
      CountDownLatch done = new CountDownLatch(1);
      String[] outcome = new String[1];
      client.okHttpClient().newCall(payment(server, "order-enqueue")).enqueue(new Callback() {
        @Override
        public void onFailure(Call call, IOException e) {
          outcome[0] = "failed: " + e;
          done.countDown();
        }

        @Override
        public void onResponse(Call call, Response response) {
          outcome[0] = describe(response);
          done.countDown();
        }
      });
      done.await(10, TimeUnit.SECONDS);
      report("OkHttp enqueue", outcome[0], server);

      // 3. Retrofit on the SDK's OkHttpClient, resuming a known intent with a saved key.
      server.reset();
      server.script(Fault.status(503), Fault.processThenDrop());
      PaymentsApi api = new Retrofit.Builder().baseUrl(server.url("/"))
          .client(client.okHttpClient()).build().create(PaymentsApi.class);
      OperationOptions options = OperationOptions.builder().idempotencyKey("order-retrofit-v1").build();
      retrofit2.Response<ResponseBody> r =
          api.create(RequestBody.create("{\"order\":\"order-retrofit\"}", JSON), options).execute();
      try (ResponseBody body = r.isSuccessful() ? r.body() : r.errorBody()) {
        report("Retrofit", r.code() + " " + (body == null ? "" : body.string()), server);
      }
      System.out.println("keys seen by the server in the Retrofit run: " + server.keysSeen());
    } finally {
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }
  }

  private static Request payment(IdempotentTestServer server, String order) {
    return new Request.Builder().url(server.url("/payments"))
        .post(RequestBody.create("{\"order\":\"" + order + "\"}", JSON)).build();
  }

  private static String describe(Response response) {
    try (response) {
      return response.code() + " " + response.body().string()
          + ("true".equals(response.header("Idempotent-Replayed")) ? " (replayed)" : "");
    } catch (IOException e) {
      return "unreadable body: " + e;
    }
  }

  private static void report(String how, String outcome, IdempotentTestServer server) {
    System.out.printf("%-15s -> %s; server requests %d, charges %d%n", how, outcome,
        server.stats().requests(), server.stats().effects());
  }
}

package io.github.resilienthttp;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import okhttp3.Request;
import okhttp3.Response;

/** The ways an operation runs, for the tests that check each of them. */
enum Ways {
  /** {@code operation(request).execute()}, on a thread of its own. */
  BLOCKING,
  /** {@code operation(request).executeAsync()}. */
  ASYNC,
  /** A plain call, {@code okHttpClient().newCall(request).execute()}, on a thread of its own. */
  PLAIN_CALL,
  /** A plain call, {@code okHttpClient().newCall(request).enqueue(...)}. */
  PLAIN_ENQUEUE;

  /**
   * Runs {@code request} this way on {@code client}.
   *
   * @return the response's future; a failure completes it exceptionally with the operation's
   *     {@code IOException} (for the blocking ways, wrapped in a {@link CompletionException})
   */
  CompletableFuture<Response> run(ResilientHttpClient client, Request request) {
    switch (this) {
      case ASYNC:
        return client.operation(request).executeAsync();
      case PLAIN_ENQUEUE:
        return start(client.okHttpClient().newCall(request), true);
      case PLAIN_CALL:
        return start(client.okHttpClient().newCall(request), false);
      default:
        return CompletableFuture.supplyAsync(() -> {
          try {
            return client.operation(request).execute();
          } catch (IOException e) {
            throw new CompletionException(e);
          }
        });
    }
  }

  /**
   * Starts an OkHttp {@code call}: enqueued, or executed on a thread of its own.
   *
   * @return the response's future; a failure completes it exceptionally with the call's
   *     {@code IOException} (when executed, wrapped in a {@link CompletionException})
   */
  static CompletableFuture<Response> start(okhttp3.Call call, boolean enqueue) {
    if (!enqueue) {
      return CompletableFuture.supplyAsync(() -> {
        try {
          return call.execute();
        } catch (IOException e) {
          throw new CompletionException(e);
        }
      });
    }
    CompletableFuture<Response> f = new CompletableFuture<>();
    call.enqueue(new okhttp3.Callback() {
      @Override
      public void onFailure(okhttp3.Call c, IOException e) {
        f.completeExceptionally(e);
      }

      @Override
      public void onResponse(okhttp3.Call c, Response response) {
        f.complete(response);
      }
    });
    return f;
  }
}

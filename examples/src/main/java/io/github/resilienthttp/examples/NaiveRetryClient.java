package io.github.resilienthttp.examples;

import java.io.IOException;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The retry loop that many code bases hand-write around OkHttp, for comparison in
 * {@link PaymentsDemo}; do not copy it. It retries up to {@value #MAX_ATTEMPTS} attempts on an
 * {@link IOException}, a 5xx or a 429, with a short growing pause, and sends no idempotency key.
 *
 * <p>That is harmless when the server refused the request (503, 429, a refused connection), and a
 * second payment when the server charged and only the response was lost: the loop cannot tell those
 * apart, and the server cannot tell the retry from a new order.
 *
 * <p>Not thread-safe: the demo runs it on one thread.
 */
final class NaiveRetryClient implements ClientCounts {
  static final int MAX_ATTEMPTS = 5;

  private final OkHttpClient okHttp;
  private int operations;
  private int succeeded;
  private int attempts;
  private int retries;
  private int failed;

  NaiveRetryClient(OkHttpClient okHttp) {
    this.okHttp = okHttp;
  }

  /** Sends {@code request} until it gets an answer not worth retrying, or runs out of attempts. */
  void send(Request request) throws InterruptedException {
    operations++;
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (attempt > 1) {
        retries++;
        Thread.sleep(5L << (attempt - 2)); // 5, 10, 20, 40 ms: as short as the SDK's backoff here
      }
      attempts++;
      try (Response response = okHttp.newCall(request).execute()) {
        if (!isRetryable(response.code())) {
          if (response.isSuccessful()) {
            succeeded++;
          } else {
            failed++;
          }
          return;
        }
      } catch (IOException e) {
        // A refused connection and a response lost after the charge both end up here.
      }
    }
    failed++;
  }

  private static boolean isRetryable(int status) {
    return status == 429 || status >= 500;
  }

  @Override
  public int operations() {
    return operations;
  }

  @Override
  public int succeeded() {
    return succeeded;
  }

  @Override
  public int attempts() {
    return attempts;
  }

  @Override
  public int retries() {
    return retries;
  }

  /** Always 0: without a key, the server has nothing to replay. */
  @Override
  public int replays() {
    return 0;
  }

  /** Always 0: the loop never knows that it does not know. */
  @Override
  public int outcomeUnknown() {
    return 0;
  }

  @Override
  public int failed() {
    return failed;
  }
}

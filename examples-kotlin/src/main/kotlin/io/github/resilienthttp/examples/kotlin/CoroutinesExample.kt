package io.github.resilienthttp.examples.kotlin

import io.github.resilienthttp.Backoff
import io.github.resilienthttp.Operation
import io.github.resilienthttp.OperationInfo
import io.github.resilienthttp.OperationListener
import io.github.resilienthttp.OperationResult
import io.github.resilienthttp.ResilientHttpClient
import io.github.resilienthttp.RetryPolicy
import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.future.await
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import mockwebserver3.MockResponse
import mockwebserver3.MockWebServer
import okhttp3.OkHttpClient
import okhttp3.Request
import okhttp3.Response

/**
 * Suspends until the operation's final response, without blocking a thread: every attempt and every
 * wait between attempts runs on OkHttp's dispatcher and the SDK's scheduler.
 *
 * Cancellation goes both ways. Cancelling the coroutine (its scope, a `withTimeout`) cancels the
 * future, which cancels the operation: the attempt in flight is cancelled and no retry starts.
 * Cancelling the operation ([Operation.cancel]) completes the future as cancelled, and `await()`
 * throws [CancellationException] in the coroutine.
 */
suspend fun Operation.await(): Response = executeAsync().await()

/** What [CoroutinesExample.run] saw, for its test. */
data class CoroutinesOutcome(
    val retriedStatus: Int,
    val retriedAttempts: Int,
    val timedOut: Boolean,
    val requestsAfterTimeout: Int,
    val canceledFromOutside: Boolean,
    val endings: List<String>,
)

object CoroutinesExample {
  @JvmStatic
  fun main(args: Array<String>) {
    println(run())
  }

  fun run(): CoroutinesOutcome = MockWebServer().use { server ->
    server.start()
    val endings = ConcurrentLinkedQueue<String>()
    val okHttp = OkHttpClient()
    val client = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder()
            .maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(10)))
            .build())
        .addListener(object : OperationListener {
          override fun operationEnded(operation: OperationInfo, result: OperationResult) {
            endings.add(result.reason())
          }
        })
        .build()
    fun get(path: String) = Request.Builder().url(server.url(path)).build()

    runBlocking {
      // 1. A retried operation, awaited: 503 then 200.
      server.enqueue(MockResponse.Builder().code(503).build())
      server.enqueue(MockResponse.Builder().code(200).body("ok").build())
      val op = client.operation(get("/orders/1"))
      val status = op.await().use { it.code }

      // 2. The coroutine gives up (withTimeout): the operation is cancelled, nothing more is sent.
      server.enqueue(MockResponse.Builder().code(200).headersDelay(5, java.util.concurrent.TimeUnit.SECONDS).build())
      val before = server.requestCount
      val timedOut = try {
        withTimeout(300) { client.operation(get("/slow")).await().close() }
        false
      } catch (e: TimeoutCancellationException) {
        true
      }
      delay(200)
      val sentAfterTimeout = server.requestCount - before

      // 3. Someone cancels the operation: the awaiting coroutine gets CancellationException.
      server.enqueue(MockResponse.Builder().code(200).headersDelay(5, java.util.concurrent.TimeUnit.SECONDS).build())
      val slow = client.operation(get("/slow-again"))
      val waiting = async {
        try {
          slow.await().close()
          false
        } catch (e: CancellationException) {
          true
        }
      }
      delay(200)
      slow.cancel()
      val canceled = waiting.await()
      // The future is cancelled at once; operationEnded comes a moment later from the thread that
      // was running the operation (its cancelled call's callback): wait for it before shutting down.
      withTimeoutOrNull(5_000) { while (endings.size < 3) delay(10) }

      okHttp.dispatcher.executorService.shutdownNow()
      okHttp.connectionPool.evictAll()
      CoroutinesOutcome(status, op.attempts(), timedOut, sentAfterTimeout, canceled, endings.toList())
    }
  }
}

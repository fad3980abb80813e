package io.github.resilienthttp.examples.kotlin

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Runs the Kotlin example as the build's smoke test, and checks what it claims. */
class CoroutinesExampleTest {
  @Test
  fun awaitRetriesAndCancellationGoesBothWays() {
    val outcome = CoroutinesExample.run()

    assertEquals(200, outcome.retriedStatus)
    assertEquals(2, outcome.retriedAttempts)
    assertTrue(outcome.timedOut, "withTimeout cancelled the await")
    assertEquals(1, outcome.requestsAfterTimeout, "one attempt sent, no retry after the cancel")
    assertTrue(outcome.canceledFromOutside, "Operation.cancel() reached the coroutine")
    assertEquals(3, outcome.endings.size, outcome.endings.toString())
    assertTrue(outcome.endings.drop(1).all { it.contains("cancel") }, outcome.endings.toString())
  }
}

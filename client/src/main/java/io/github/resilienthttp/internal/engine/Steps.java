package io.github.resilienthttp.internal.engine;

import java.io.IOException;
import okhttp3.Response;

/**
 * A feature above the retry loop (the 202 wait, the outcome query) written once, as a step
 * machine: given the last answer, the next {@link Step}. A {@link Run} drives it, blocking or not,
 * under the run's one deadline and one cancel signal ({@link Run#isCanceled()},
 * {@link Run#remainingNanos()}); the machine never sleeps, blocks or sends by itself. The driver
 * calls one method at a time, each after the previous returned (with a happens-before edge between
 * them), so a machine needs no lock. A method that throws ends the run with that failure. Not API.
 */
public interface Steps {
  /**
   * The first step.
   *
   * @return the first step
   * @throws IOException when the run cannot start
   */
  Step start() throws IOException;

  /**
   * The attempts or the operation of the last step answered.
   *
   * @param response its final response, which the machine now owns (returns or closes it)
   * @return the next step
   * @throws IOException the run's failure
   */
  Step answered(Response response) throws IOException;

  /**
   * The attempts or the operation of the last step failed.
   *
   * @param failure its failure
   * @return the next step
   * @throws IOException the run's failure (often {@code failure} itself)
   */
  Step failed(IOException failure) throws IOException;

  /**
   * The wait of the last step is over (its time passed, or a cancel cut it short).
   *
   * @return the next step
   * @throws IOException the run's failure
   */
  Step waited() throws IOException;

  /**
   * The wait of the last step could not go on: the blocking thread was interrupted (its flag is
   * set again), or the scheduler refused the wait.
   *
   * @param cause the {@link InterruptedException} or the scheduler's refusal
   * @return the run's failure
   */
  IOException waitStopped(Exception cause);

  /**
   * The run's failure when it was cancelled just as its final response was ready (the response is
   * closed).
   *
   * @return the failure
   */
  IOException canceled();
}

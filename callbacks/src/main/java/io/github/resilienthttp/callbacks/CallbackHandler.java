package io.github.resilienthttp.callbacks;

/**
 * The application's work for one verified event, run by {@link CallbackReceiver#receive} at most once
 * to completion per event ID.
 */
@FunctionalInterface
public interface CallbackHandler {
  /**
   * Handles the event.
   *
   * @param callback the verified delivery
   * @return a result to store with the record (up to 4000 characters on JDBC), may be {@code null}
   * @throws Exception any failure: the record is released and the sender gets 500, so it redelivers
   */
  String handle(VerifiedCallback callback) throws Exception;
}

package io.github.resilienthttp.examples;

import io.github.resilienthttp.AsyncOperationDeadlineExceededException;
import io.github.resilienthttp.AsyncOperationPolicy;
import io.github.resilienthttp.OperationInfo;
import io.github.resilienthttp.OperationListener;
import io.github.resilienthttp.Outbox;
import io.github.resilienthttp.OutboxResumer;
import io.github.resilienthttp.OutcomeQuery;
import io.github.resilienthttp.OutcomeQueryPolicy;
import io.github.resilienthttp.OutcomeUnknownException;
import io.github.resilienthttp.PollStatus;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.ResumeToken;
import io.github.resilienthttp.testkit.AsyncJobServer.JobScript;
import io.github.resilienthttp.testkit.AsyncJobServer;
import io.github.resilienthttp.testkit.LookupPaymentsServer;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Following an intent past the first answer, offline against the testkit's servers:
 *
 * <ol>
 *   <li>an asynchronous job (202 + status polling with {@code Retry-After}) awaited to its result;
 *   <li>a wait that runs out of time, its {@link ResumeToken} printed as text, parsed, and resumed by
 *       a new client (as a restarted process would), without re-submitting;
 *   <li>a payment to a downstream without idempotency keys whose response is lost, settled by an
 *       outcome query (found: no duplicate charge);
 *   <li>an unknown outcome parked in an {@link Outbox} and drained later by an {@link OutboxResumer}.
 * </ol>
 *
 * <p>Run: {@code java -cp examples/target/resilient-http-demo.jar
 * io.github.resilienthttp.examples.IntentExample}
 */
public final class IntentExample {
  private static final MediaType JSON = MediaType.get("application/json");

  private IntentExample() {}

  /**
   * What the run saw.
   *
   * @param jobResult the first job's result body
   * @param polls polls of the first job
   * @param resumedResult the resumed job's result body
   * @param resumedSubmits submits the server saw for the resumed job (1: never re-sent)
   * @param foundByQuery whether the lost payment was found by the query
   * @param charges charges of the lost payment (1: no duplicate)
   * @param drained the resumer's report
   */
  public record Result(String jobResult, int polls, String resumedResult, int resumedSubmits,
      boolean foundByQuery, int charges, OutboxResumer.Report drained) {}

  public static void main(String[] args) throws IOException {
    run(System.out);
  }

  /**
   * Runs the four scenarios, printing what happens.
   *
   * @param out where to print
   * @return what the run saw
   * @throws IOException when a scenario fails unexpectedly
   */
  public static Result run(PrintStream out) throws IOException {
    OkHttpClient okHttp = new OkHttpClient();
    AtomicInteger polls = new AtomicInteger();
    // Resume tokens are signed: every process that resumes another's tokens needs the same key
    // (in production, 32 random bytes from the application's secret store).
    byte[] tokenKey = new byte[32];
    new java.security.SecureRandom().nextBytes(tokenKey);
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp).resumeTokenKey(tokenKey)
        .addListener(new OperationListener() {
          @Override
          public void pollCompleted(OperationInfo operation, int poll, PollStatus status) {
            polls.incrementAndGet();
            out.println("  poll " + poll + ": " + status.state());
          }
        }).build();
    AsyncOperationPolicy policy = AsyncOperationPolicy.builder()
        .minPollInterval(Duration.ofMillis(20)).maxPollInterval(Duration.ofMillis(100))
        .deadline(Duration.ofSeconds(10)).build();
    try (AsyncJobServer jobs = new AsyncJobServer(client.timeSource());
        LookupPaymentsServer payments = new LookupPaymentsServer()) {
      out.println("1. A 202-accepted job, polled to its result");
      jobs.script(JobScript.succeedsAfterPolls(2));
      String jobResult;
      try (Response r = client.operation(submit(jobs)).awaitCompletion(policy)) {
        jobResult = r.body().string();
      }
      out.println("  result: " + jobResult);
      int firstPolls = polls.get();

      out.println("2. A wait that runs out of time, resumed from its token by a new client");
      jobs.script(JobScript.succeedsAfter(Duration.ofMillis(400)));
      String text;
      try {
        client.operation(submit(jobs))
            .awaitCompletion(policy.toBuilder().deadline(Duration.ofMillis(150)).build());
        throw new IllegalStateException("expected the wait to run out of time");
      } catch (AsyncOperationDeadlineExceededException e) {
        text = e.resumeToken().toText();
        out.println("  deadline passed; saved token " + text.substring(0, 24) + "…");
      }
      ResilientHttpClient restarted = ResilientHttpClient.wrap(okHttp).resumeTokenKey(tokenKey)
          .build();
      String resumedResult;
      try (Response r = restarted.resume(ResumeToken.parse(text), policy)) {
        resumedResult = r.body().string();
      }
      int resumedSubmits = jobs.seen("POST", "/jobs").size() - 1;
      out.println("  resumed: " + resumedResult + " (submits: " + resumedSubmits + ")");

      out.println("3. A lost payment to an API without keys, settled by an outcome query");
      payments.script(LookupPaymentsServer.Submit.CHARGE_THEN_DROP);
      OutcomeQueryPolicy query = OutcomeQueryPolicy.builder(
              OutcomeQuery.lookup((request, key) -> payments.lookupUrl("order-42")))
          .graceDelay(Duration.ofMillis(50)).build();
      boolean found;
      try (Response r = client.operation(payment(payments)).sendIdempotencyKey(false)
          .outcomeQuery(query).execute()) {
        found = OutcomeQuery.foundByQuery(r);
        out.println("  " + (found ? "found by query: " : "answered: ") + r.body().string());
      }
      int charges = payments.charges("order-42");
      out.println("  charges: " + charges);

      out.println("4. An unknown outcome parked in the outbox, drained later");
      Outbox outbox = Outbox.inMemory();
      payments.honourKeys(true).script(LookupPaymentsServer.Submit.CHARGE_THEN_DROP,
          LookupPaymentsServer.Submit.CHARGE_THEN_DROP, LookupPaymentsServer.Submit.CHARGE_THEN_DROP);
      Request parkedPayment = payment(payments, "order-43");
      try {
        client.operation(parkedPayment).parkIndefiniteOutcomes(outbox).execute().close();
      } catch (OutcomeUnknownException e) {
        out.println("  outcome unknown; parked: " + outbox.size());
      }
      OutboxResumer.Report drained = OutboxResumer.builder(client, outbox)
          .requestFor(token -> parkedPayment).build().drainOnce();
      out.println("  drained: " + drained + "; charges of order-43: "
          + payments.charges("order-43"));
      return new Result(jobResult, firstPolls, resumedResult, resumedSubmits, found, charges,
          drained);
    } finally {
      okHttp.dispatcher().executorService().shutdown();
      okHttp.connectionPool().evictAll();
    }
  }

  private static Request submit(AsyncJobServer jobs) {
    return new Request.Builder().url(jobs.url("/jobs"))
        .post(RequestBody.create("{\"report\":\"monthly\"}", JSON)).build();
  }

  private static Request payment(LookupPaymentsServer payments) {
    return payment(payments, "order-42");
  }

  private static Request payment(LookupPaymentsServer payments, String reference) {
    return new Request.Builder().url(payments.url("/payments"))
        .post(RequestBody.create("{\"amount\":100,\"reference\":\"" + reference + "\"}", JSON))
        .build();
  }
}

package io.github.resilienthttp.testkit.probe;

import io.github.resilienthttp.AttemptOutcome;
import io.github.resilienthttp.Decision;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.internal.classify.AnswerInContext;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * One run of an {@link IdempotencyProbe}'s checks: sends each check's requests through the run's
 * {@link ProbeTransport} and judges the answers (see the probe's class comment for what counts as
 * an execution and a replay). Remembers whether the server was seen marking a replay, which check 4
 * relies on. Not thread-safe; one per run. Not API.
 */
final class ProbeBattery {
  private final IdempotencyProbe probe;
  private final ProbeTransport transport;
  private boolean replaysMarked;

  ProbeBattery(IdempotencyProbe probe, ProbeTransport transport) {
    this.probe = probe;
    this.transport = transport;
  }

  /** Runs every check, in order. */
  List<CheckResult> run() throws InterruptedException {
    List<CheckResult> results = new ArrayList<>();
    results.add(measure(ProbeCheck.REPLAY, this::replay));
    results.add(measure(ProbeCheck.KEY_REUSE_REJECTED, this::keyReuse));
    results.add(measure(ProbeCheck.CONCURRENT_REQUESTS, this::concurrent));
    results.add(measure(ProbeCheck.LOST_RESPONSE, this::lostResponse));
    results.add(measure(ProbeCheck.KEY_REQUIRED, this::keyRequired));
    results.add(measure(ProbeCheck.RETENTION, this::retention));
    return results;
  }

  private CheckResult measure(ProbeCheck check, CheckBody steps) throws InterruptedException {
    int before = transport.sent();
    Outcome outcome;
    try {
      outcome = steps.run();
    } catch (ProbeTransport.CapReached capped) {
      outcome = new Outcome(Verdict.CANNOT_TELL, "cannot tell within the cap: " + capped.getMessage()
          + " (--max-requests raises it)");
    }
    return new CheckResult(check, outcome.verdict, outcome.evidence, transport.sent() - before);
  }

  /** The effect counter's reading, or -1 without a counter (or when it cannot be read). */
  private long countNow() {
    if (probe.effectCounter == null) return -1;
    try {
      OptionalLong n = probe.effectCounter.count();
      return n.isPresent() ? n.getAsLong() : -1;
    } catch (RuntimeException e) {
      return -1;
    }
  }

  /** Effects counted since {@code before}, or -1 when not counted. */
  private long effectsSince(long before) {
    if (before < 0) return -1;
    long after = countNow();
    return after < 0 ? -1 : after - before;
  }

  private String counted(long effects) {
    return effects < 0 ? "" : "; " + effects + (effects == 1 ? " effect" : " effects") + " counted by "
        + probe.effectCounter;
  }

  /** Judges by the counted effects when there is a counter: one effect passes, more fail. */
  private Outcome byCount(long effects, String evidence) {
    if (effects == 1) return pass(evidence + ": one effect (judged by the effect count)");
    if (effects > 1) return fail(evidence + ": executed " + effects + " times (judged by the effect count)");
    return fail(evidence + ": no effect counted (judged by the effect count)");
  }

  private static Outcome cannotTell(String evidence) {
    return new Outcome(Verdict.CANNOT_TELL, evidence + ": cannot tell whether it executed again: the"
        + " answers carry no resource id and no replay header (give an effect counter: --count-url)");
  }

  /**
   * How the SDK's default classifier, in the operation's context, reads an answer: "final" (the
   * result, returned), "replay", "in progress" (retried), "mismatch" (final), "retry", "outcome
   * unknown".
   */
  private String sdkReads(ProbeExchange e, int attempt, boolean earlierMayHaveReachedServer) {
    if (e.status() < 0) return "outcome unknown (no answer)";
    String type = e.header("Content-Type");
    Response response = new Response.Builder()
        .request(new Request.Builder().url(probe.url).build()).protocol(Protocol.HTTP_1_1)
        .code(e.status()).message("").headers(e.headers())
        .body(ResponseBody.create(e.body(), type == null ? null : MediaType.parse(type))).build();
    try (response) {
      Decision d = ResponseClassifier.defaults().classify(AttemptOutcome.ofResponse(response, attempt, true));
      d = AnswerInContext.apply(d, response, true, attempt, earlierMayHaveReachedServer, probe.replayHeader);
      if (replayed(e) || d.reason().equals("idempotent-replay")) return "replay";
      if (d.reason().startsWith("idempotency-key-in-progress")) return "in progress";
      if (d.reason().equals("idempotency-key-mismatch")) return "mismatch";
      switch (d.kind()) {
        case SUCCESS:
        case FAIL:
          return "final";
        case RETRY:
          return "retry (not processed)";
        default:
          return "outcome unknown (retried only with the key)";
      }
    }
  }

  private boolean identifies(ProbeExchange e) {
    return idOf(e).isPresent();
  }

  private Outcome replay() {
    String key = newKey();
    long before = countNow();
    ProbeExchange first = send(key, probe.body);
    if (!first.successful()) {
      return notAccepted(first);
    }
    ProbeExchange retry = send(key, probe.body);
    long effects = effectsSince(before);
    String evidence = "first " + describe(first) + "; retry " + describe(retry) + counted(effects)
        + "; SDK reads the retry as: " + sdkReads(retry, 2, true);
    if (retry.status() != first.status()) {
      return fail(evidence + ": the replay's status differs from the first answer's");
    }
    if (effects >= 0) {
      return byCount(effects, evidence);
    }
    if (!sameResource(first, retry)) {
      return fail(evidence + ": executed again (" + resourceText(retry) + " is not "
          + resourceText(first) + (identifies(first) ? ")" : "; judged by the whole body)"));
    }
    if (replayed(retry)) {
      return pass(evidence + " (judged by the replay header" + (identifies(first) ? " and the resource id)" : ")"));
    }
    if (!identifies(first)) {
      return cannotTell(evidence);
    }
    return pass(evidence + " (no " + probe.replayHeader + " header: judged by the resource id)");
  }

  private Outcome keyReuse() {
    String key = newKey();
    ProbeExchange first = send(key, probe.body);
    if (!first.successful()) {
      return notAccepted(first);
    }
    long before = countNow();
    ProbeExchange other = send(key, probe.otherBody);
    ProbeExchange again = settle(key, probe.body);
    long effects = effectsSince(before);
    String evidence = "first " + describe(first) + "; other body " + describe(other)
        + "; first body again " + describe(again) + counted(effects)
        + "; SDK reads the other body's answer as: " + sdkReads(other, 1, false);
    if (other.successful()) {
      if (effects > 0 || (identifies(first) && identifies(other) && !sameResource(first, other))) {
        return fail(evidence + ": the different request was executed under the same key");
      }
      if (effects == 0 || (identifies(first) && sameResource(first, other))) {
        return fail(evidence + ": the first result was returned for a different request"
            + " (fingerprint not checked)");
      }
      return fail(evidence + ": the different request got a 2xx under the same key (executed, or"
          + " the first result returned: the answers do not identify the effect)");
    }
    if (other.status() != probe.mismatchStatus) {
      return fail(evidence + ": expected " + probe.mismatchStatus + " for the different body");
    }
    if (!again.successful() || !sameResource(first, again) || effects > 0) {
      return fail(evidence + ": after the rejection the key no longer names the first result");
    }
    return pass(evidence + (effects == 0 ? " (judged by the status and the effect count)"
        : identifies(first) || replayed(again) ? " (judged by the status and the resource)"
        : " (judged by the status; whether the first body again ran cannot be told without an id)"));
  }

  private Outcome concurrent() throws InterruptedException {
    String key = newKey();
    long before = countNow();
    List<ProbeExchange> answers = transport.burst(key, probe.body, probe.concurrency);
    long effects = effectsSince(before);
    Map<String, Integer> readings = new TreeMap<>();
    int successes = 0;
    int unmarkedSuccesses = 0;
    for (ProbeExchange a : answers) {
      readings.merge(sdkReads(a, 1, false), 1, Integer::sum);
      if (a.successful()) {
        successes++;
        if (!replayed(a)) unmarkedSuccesses++;
      }
    }
    Map<String, Integer> statuses = new TreeMap<>();
    Set<String> resources = new LinkedHashSet<>();
    int unexpected = 0;
    for (ProbeExchange a : answers) {
      if (!a.successful() && a.status() != 409 && a.status() != 429 && a.status() != 503) {
        unexpected++;
      }
      statuses.merge(a.status() >= 0 ? Integer.toString(a.status()) : "no answer", 1,
          Integer::sum);
      if (a.successful()) {
        resources.add(resource(a));
      }
      replaysMarked |= replayed(a);
    }
    StringBuilder evidence = new StringBuilder(probe.concurrency + " at once: ");
    statuses.forEach((s, n) -> evidence.append(n).append('×').append(s).append(", "));
    evidence.setLength(evidence.length() - 2);
    evidence.append("; ").append(resources.size()).append(resources.size() == 1
        ? " resource" : " resources");
    if (!resources.isEmpty()) {
      evidence.append(' ').append(abbreviate(resources));
    }
    evidence.append(counted(effects)).append("; SDK reads them as: ");
    readings.forEach((r, n) -> evidence.append(n).append('×').append(r).append(", "));
    evidence.setLength(evidence.length() - 2);
    if (effects >= 0) {
      return byCount(effects, evidence.toString());
    }
    if (resources.size() > 1) {
      return fail(evidence + ": executed " + resources.size() + " times");
    }
    if (resources.isEmpty()) {
      return fail(evidence + ": no request of the burst was executed");
    }
    if (unexpected > 0) {
      return fail(evidence + ": " + unexpected + " answered neither 2xx nor 409 (nor 429 or 503,"
          + " which say \"not processed\"), so their outcome is unknown");
    }
    boolean byId = identifies(answers.stream().filter(ProbeExchange::successful).findFirst().orElseThrow());
    if (!byId && unmarkedSuccesses > 1) {
      return cannotTell(evidence + ": " + successes + " answers were 2xx with the same body");
    }
    return pass(evidence + (byId ? " (judged by the resource id)" : successes == 1
        ? " (judged by the statuses: one 2xx)" : " (judged by the replay header: one unmarked 2xx)"));
  }

  private Outcome lostResponse() throws InterruptedException {
    String key = newKey();
    long before = countNow();
    String dropped = transport.sendAndDrop(key, probe.body);
    ProbeExchange retry = settle(key, probe.body);
    ProbeExchange again = send(key, probe.body);
    long effects = effectsSince(before);
    String evidence = "dropped request " + dropped + "; retry " + describe(retry)
        + "; again " + describe(again) + counted(effects) + "; SDK reads the retry as: "
        + sdkReads(retry, 2, true);
    if (effects >= 0 && retry.successful()) {
      return byCount(effects, evidence);
    }
    if (!retry.successful()) {
      return fail(evidence + ": the retry did not get a result");
    }
    if (again.status() != retry.status() || !sameResource(retry, again)) {
      return fail(evidence + ": executed again (" + resourceText(again) + " is not "
          + resourceText(retry) + ")");
    }
    if (replaysMarked && !replayed(retry)) {
      return fail(evidence + ": the retry was executed, not replayed, although the server marks"
          + " replays: the dropped request's result was not kept");
    }
    if (!replayed(retry)) {
      if (!identifies(retry)) {
        return cannotTell(evidence);
      }
      return pass(evidence + " (the server marks no replays: whether the dropped request ran"
          + " cannot be told; the key names one resource id)");
    }
    return pass(evidence + " (judged by the replay header)");
  }

  private Outcome keyRequired() {
    if (!probe.keyRequired) {
      return new Outcome(Verdict.NOT_APPLICABLE, "not configured (the server is not expected"
          + " to require a key)");
    }
    ProbeExchange answer = send(null, probe.body);
    String evidence = "without a key: " + describe(answer) + "; SDK reads it as: " + sdkReads(answer, 1, false);
    if (answer.status() == probe.keyRequiredStatus) {
      return pass(evidence);
    }
    if (answer.successful()) {
      return fail(evidence + ": executed without a key");
    }
    return fail(evidence + ": expected " + probe.keyRequiredStatus);
  }

  private Outcome retention() throws InterruptedException {
    if (probe.retention == null) {
      return new Outcome(Verdict.NOT_APPLICABLE, "not configured (no retention given)");
    }
    String key = newKey();
    ProbeExchange first = send(key, probe.body);
    if (!first.successful()) {
      return notAccepted(first);
    }
    probe.time.sleep(probe.retention);
    ProbeExchange late = send(key, probe.body);
    String evidence = "first " + describe(first) + "; after " + probe.retention + ": "
        + describe(late) + "; SDK reads it as: " + sdkReads(late, 2, true);
    if (late.successful() && !identifies(first) && !replayed(late) && sameResource(first, late)
        && probe.afterRetention != AfterRetention.REJECTED) {
      return cannotTell(evidence);
    }
    boolean same = late.successful() && late.status() == first.status()
        && sameResource(first, late);
    switch (probe.afterRetention) {
      case EXECUTED_AGAIN:
        return late.successful() && !same && !replayed(late)
            ? pass(evidence + ": executed again, as documented")
            : fail(evidence + ": expected a new execution");
      case REPLAYED:
        return same ? pass(evidence + ": replayed, as documented")
            : fail(evidence + ": expected the first result replayed");
      default:
        return late.status() >= 400 && late.status() < 500
            ? pass(evidence + ": rejected, as documented")
            : fail(evidence + ": expected a 4xx rejection");
    }
  }

  /** Sends, and while the answer is 409 (in progress) waits and sends again, boundedly. */
  private ProbeExchange settle(String key, String requestBody) {
    ProbeExchange answer = send(key, requestBody);
    for (int i = 0; i < probe.inProgressRetries && answer.status() == 409; i++) {
      try {
        probe.time.sleep(probe.inProgressPause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return answer;
      }
      answer = send(key, requestBody);
    }
    return answer;
  }

  private ProbeExchange send(String key, String requestBody) {
    ProbeExchange answer = transport.send(key, requestBody);
    replaysMarked |= replayed(answer);
    return answer;
  }

  private Outcome notAccepted(ProbeExchange first) {
    return fail("first request " + describe(first) + ": the probe needs a 2xx answer to a new"
        + " request (check the URL, body and headers)");
  }

  private boolean replayed(ProbeExchange e) {
    return "true".equalsIgnoreCase(String.valueOf(e.header(probe.replayHeader)).trim());
  }

  private Optional<String> idOf(ProbeExchange e) {
    try {
      return probe.resourceId.resourceId(e);
    } catch (RuntimeException ex) {
      return Optional.empty();
    }
  }

  /** The resource an answer names: its id, else its whole body. */
  private String resource(ProbeExchange e) {
    return idOf(e).map(id -> "id " + id).orElseGet(() -> "body " + e.body());
  }

  private boolean sameResource(ProbeExchange a, ProbeExchange b) {
    return resource(a).equals(resource(b));
  }

  private String resourceText(ProbeExchange e) {
    return abbreviate(resource(e), 60);
  }

  private String describe(ProbeExchange e) {
    if (e.status() < 0) {
      return e.statusText();
    }
    StringBuilder s = new StringBuilder(Integer.toString(e.status()));
    if (e.successful()) {
      s.append(' ').append(resourceText(e));
    }
    if (replayed(e)) {
      s.append(' ').append(probe.replayHeader).append(": true");
    }
    return s.toString();
  }

  private static String abbreviate(Set<String> resources) {
    List<String> shown = new ArrayList<>();
    for (String r : resources) {
      if (shown.size() == 3) {
        shown.add("...");
        break;
      }
      shown.add(abbreviate(r, 40));
    }
    return "(" + String.join(", ", shown) + ")";
  }

  private static String abbreviate(String s, int max) {
    String flat = s.replace('\n', ' ').replace('\r', ' ');
    return flat.length() <= max ? flat : flat.substring(0, max - 3) + "...";
  }

  private static String newKey() {
    return "probe-" + UUID.randomUUID();
  }

  private static Outcome pass(String evidence) {
    return new Outcome(Verdict.PASS, evidence);
  }

  private static Outcome fail(String evidence) {
    return new Outcome(Verdict.FAIL, evidence);
  }

  private record Outcome(Verdict verdict, String evidence) {}

  @FunctionalInterface
  private interface CheckBody {
    Outcome run() throws InterruptedException;
  }
}

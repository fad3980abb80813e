package io.github.resilienthttp.testkit.probe;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

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
    Outcome outcome = steps.run();
    return new CheckResult(check, outcome.verdict, outcome.evidence, transport.sent() - before);
  }

  private Outcome replay() {
    String key = newKey();
    ProbeExchange first = send(key, probe.body);
    if (!first.successful()) {
      return notAccepted(first);
    }
    ProbeExchange retry = send(key, probe.body);
    String evidence = "first " + describe(first) + "; retry " + describe(retry);
    if (retry.status() != first.status()) {
      return fail(evidence + ": the replay's status differs from the first answer's");
    }
    if (!sameResource(first, retry)) {
      return fail(evidence + ": executed again (" + resourceText(retry) + " is not "
          + resourceText(first) + ")");
    }
    if (!replayed(retry)) {
      return pass(evidence + " (no " + probe.replayHeader + " header: judged by the resource)");
    }
    return pass(evidence);
  }

  private Outcome keyReuse() {
    String key = newKey();
    ProbeExchange first = send(key, probe.body);
    if (!first.successful()) {
      return notAccepted(first);
    }
    ProbeExchange other = send(key, probe.otherBody);
    ProbeExchange again = settle(key, probe.body);
    String evidence = "first " + describe(first) + "; other body " + describe(other)
        + "; first body again " + describe(again);
    if (other.successful()) {
      return fail(evidence + (sameResource(first, other)
          ? ": the first result was returned for a different request (fingerprint not checked)"
          : ": the different request was executed under the same key"));
    }
    if (other.status() != probe.mismatchStatus) {
      return fail(evidence + ": expected " + probe.mismatchStatus + " for the different body");
    }
    if (!again.successful() || !sameResource(first, again)) {
      return fail(evidence + ": after the rejection the key no longer names the first result");
    }
    return pass(evidence);
  }

  private Outcome concurrent() throws InterruptedException {
    String key = newKey();
    List<ProbeExchange> answers = transport.burst(key, probe.body, probe.concurrency);
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
    return pass(evidence.toString());
  }

  private Outcome lostResponse() throws InterruptedException {
    String key = newKey();
    String dropped = transport.sendAndDrop(key, probe.body);
    ProbeExchange retry = settle(key, probe.body);
    ProbeExchange again = send(key, probe.body);
    String evidence = "dropped request " + dropped + "; retry " + describe(retry)
        + "; again " + describe(again);
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
      return pass(evidence + " (the server marks no replays: whether the dropped request ran"
          + " cannot be told; the key names one result)");
    }
    return pass(evidence);
  }

  private Outcome keyRequired() {
    if (!probe.keyRequired) {
      return new Outcome(Verdict.NOT_APPLICABLE, "not configured (the server is not expected"
          + " to require a key)");
    }
    ProbeExchange answer = send(null, probe.body);
    String evidence = "without a key: " + describe(answer);
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
        + describe(late);
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

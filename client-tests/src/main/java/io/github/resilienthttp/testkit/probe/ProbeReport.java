package io.github.resilienthttp.testkit.probe;

import java.util.List;
import java.util.Objects;

/**
 * What an {@link IdempotencyProbe} run found: one {@link CheckResult} per {@link ProbeCheck}, in
 * order, and how many requests it sent against its cap. Immutable; renders as a table ({@link
 * #toTable()}) or JSON ({@link #toJson()}).
 *
 * @param method the HTTP method probed
 * @param url the URL probed, without user info and query ({@link IdempotencyProbe#shown})
 * @param keyHeader the idempotency key header name
 * @param requestCap the most requests the run could send
 * @param requestsSent the requests it sent
 * @param results one result per check, in check order
 */
public record ProbeReport(
    String method,
    String url,
    String keyHeader,
    int requestCap,
    int requestsSent,
    List<CheckResult> results) {

  /**
   * Validates and copies the components.
   *
   * @param method the method
   * @param url the URL
   * @param keyHeader the key header
   * @param requestCap the cap
   * @param requestsSent the requests sent, at most the cap
   * @param results the results
   */
  public ProbeReport {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(keyHeader, "keyHeader");
    results = List.copyOf(results);
    if (requestsSent > requestCap) {
      throw new IllegalArgumentException(
          "requestsSent " + requestsSent + " exceeds requestCap " + requestCap);
    }
  }

  /**
   * Tells whether any check failed.
   *
   * @return true when at least one verdict is {@link Verdict#FAIL}
   */
  public boolean failed() {
    return results.stream().anyMatch(r -> r.verdict() == Verdict.FAIL);
  }

  /**
   * The result of one check.
   *
   * @param check the check
   * @return its result
   * @throws IllegalArgumentException if the report has none for it
   */
  public CheckResult result(ProbeCheck check) {
    return results.stream()
        .filter(r -> r.check() == check)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no result for " + check));
  }

  /**
   * The checks that failed, in order.
   *
   * @return the failed checks
   */
  /**
   * Whether no check failed but at least one could not tell (see {@link Verdict#CANNOT_TELL}).
   *
   * @return true when the report is inconclusive
   */
  public boolean cannotTell() {
    return !failed() && results.stream().anyMatch(r -> r.verdict() == Verdict.CANNOT_TELL);
  }

  /**
   * The checks whose verdict is {@link Verdict#FAIL}, in the order they ran.
   *
   * @return the failed checks (empty when none failed)
   */
  public List<ProbeCheck> failedChecks() {
    return results.stream()
        .filter(r -> r.verdict() == Verdict.FAIL)
        .map(CheckResult::check)
        .toList();
  }

  /**
   * A plain-text table: one row per check with its verdict, requests and evidence, then a summary
   * line.
   *
   * @return the table, lines ending in {@code \n}
   */
  public String toTable() {
    StringBuilder out = new StringBuilder();
    out.append("Idempotency probe: ").append(method).append(' ').append(url)
        .append(" (key header ").append(keyHeader).append(")\n");
    out.append("sent ").append(requestsSent).append(" requests (at most ").append(requestCap)
        .append("), all to this URL\n\n");
    out.append(String.format("%-2s  %-62s  %-11s  %8s  %s%n", "#", "check", "verdict", "requests",
        "evidence"));
    for (CheckResult r : results) {
      out.append(String.format("%-2d  %-62s  %-11s  %8d  %s%n", r.check().number(),
          r.check().title(), label(r.verdict()), r.requests(), r.evidence()));
    }
    long failed = results.stream().filter(r -> r.verdict() == Verdict.FAIL).count();
    long notApplicable =
        results.stream().filter(r -> r.verdict() == Verdict.NOT_APPLICABLE).count();
    long unknown = results.stream().filter(r -> r.verdict() == Verdict.CANNOT_TELL).count();
    out.append('\n').append("result: ")
        .append(failed > 0 ? "FAIL" : unknown > 0 ? "CANNOT TELL" : "PASS").append(" (")
        .append(failed).append(" failed, ").append(results.size() - failed - notApplicable - unknown)
        .append(" passed, ").append(unknown).append(" cannot tell, ").append(notApplicable)
        .append(" not applicable)\n");
    return out.toString();
  }

  /**
   * The report as one JSON object: {@code method}, {@code url}, {@code keyHeader}, {@code
   * requestCap}, {@code requestsSent}, {@code passed} and {@code checks} (each with {@code number},
   * {@code name}, {@code title}, {@code verdict}, {@code requests}, {@code evidence}).
   *
   * @return the JSON text, ending in a newline
   */
  public String toJson() {
    StringBuilder out = new StringBuilder("{");
    out.append("\"method\":").append(quote(method)).append(',');
    out.append("\"url\":").append(quote(url)).append(',');
    out.append("\"keyHeader\":").append(quote(keyHeader)).append(',');
    out.append("\"requestCap\":").append(requestCap).append(',');
    out.append("\"requestsSent\":").append(requestsSent).append(',');
    out.append("\"passed\":").append(!failed() && !cannotTell()).append(',');
    out.append("\"result\":").append(quote(failed() ? "FAIL" : cannotTell() ? "CANNOT_TELL" : "PASS")).append(',');
    out.append("\"checks\":[");
    for (int i = 0; i < results.size(); i++) {
      CheckResult r = results.get(i);
      if (i > 0) {
        out.append(',');
      }
      out.append("{\"number\":").append(r.check().number())
          .append(",\"name\":").append(quote(r.check().name()))
          .append(",\"title\":").append(quote(r.check().title()))
          .append(",\"verdict\":").append(quote(r.verdict().name()))
          .append(",\"requests\":").append(r.requests())
          .append(",\"evidence\":").append(quote(r.evidence())).append('}');
    }
    return out.append("]}\n").toString();
  }

  private static String label(Verdict verdict) {
    return verdict == Verdict.NOT_APPLICABLE ? "n/a" : verdict == Verdict.CANNOT_TELL ? "CANNOT TELL" : verdict.name();
  }

  private static String quote(String s) {
    StringBuilder q = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> q.append("\\\"");
        case '\\' -> q.append("\\\\");
        case '\n' -> q.append("\\n");
        case '\r' -> q.append("\\r");
        case '\t' -> q.append("\\t");
        default -> {
          if (c < 0x20) {
            q.append(String.format("\\u%04x", (int) c));
          } else {
            q.append(c);
          }
        }
      }
    }
    return q.append('"').toString();
  }
}

package io.github.resilienthttp.examples;

import io.github.resilienthttp.testkit.Flaw;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import io.github.resilienthttp.testkit.probe.AfterRetention;
import io.github.resilienthttp.testkit.probe.EffectCounter;
import io.github.resilienthttp.testkit.probe.IdempotencyProbe;
import io.github.resilienthttp.testkit.probe.ProbeReport;
import io.github.resilienthttp.testkit.probe.ResourceIdExtractor;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import okhttp3.HttpUrl;

/**
 * {@code java -jar resilient-http-demo.jar probe ...}: runs the testkit's {@link IdempotencyProbe}
 * against a server and prints its report (see {@link ProbeOptions#USAGE}). With {@code --embedded}
 * (or {@code --embedded-flaw FLAW}) it first starts an {@link IdempotentTestServer} on the loopback
 * interface that requires keys, keeps them for {@value #EMBEDDED_RETENTION_MS} ms and takes
 * {@value #EMBEDDED_PROCESSING_MS} ms per payment, and probes that, with checks 5 and 6 on.
 */
final class ProbeCommand {
  /** The exit code when no check failed but one could not tell. */
  static final int EXIT_CANNOT_TELL = 3;
  static final long EMBEDDED_RETENTION_MS = 1000;
  static final long EMBEDDED_PROCESSING_MS = 100;

  private ProbeCommand() {}

  /**
   * Runs the command.
   *
   * @param args the arguments after {@code probe}
   * @return the exit code: 0 no check failed, 1 a check failed, 3 none failed but one could not
   *     tell, 2 bad arguments
   */
  static int run(String[] args, PrintStream out, PrintStream err) {
    ProbeOptions options;
    try {
      options = ProbeOptions.parse(args);
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      err.print(ProbeOptions.USAGE);
      return 2;
    }
    if (options.help()) {
      out.print(ProbeOptions.USAGE);
      return 0;
    }
    if (options.url() != null) {
      return probe(options, options.url(), false, out, err);
    }
    try (IdempotentTestServer server = embeddedServer(options.flaw())) {
      return probe(options, server.url("/payments"), true, out, err);
    } catch (IOException e) {
      err.println("error: cannot start the embedded server: " + e.getMessage());
      return 2;
    }
  }

  private static IdempotentTestServer embeddedServer(Flaw flaw) throws IOException {
    return IdempotentTestServer.builder()
        .requireKeyForNonIdempotent(true)
        .retention(Duration.ofMillis(EMBEDDED_RETENTION_MS))
        .processingTime(Duration.ofMillis(EMBEDDED_PROCESSING_MS))
        .flaw(flaw)
        .build()
        .start();
  }

  private static int probe(
      ProbeOptions options, HttpUrl url, boolean embedded, PrintStream out, PrintStream err) {
    IdempotencyProbe probe;
    try {
      probe = configure(options, url, embedded).build();
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return 2;
    }
    if (!options.json()) {
      out.printf("Probing %s %s%s: at most %d requests, all to this URL.%n%n", options.method(),
          IdempotencyProbe.shown(url), embedded ? " (embedded payments server, flaw "
              + options.flaw().name().toLowerCase(Locale.ROOT) + ")" : "",
          probe.plannedRequests());
    }
    ProbeReport report;
    try {
      report = probe.run();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("error: interrupted");
      return 1;
    }
    out.print(options.json() ? report.toJson() : report.toTable());
    return report.failed() ? 1 : report.cannotTell() ? EXIT_CANNOT_TELL : 0;
  }

  private static IdempotencyProbe.Builder configure(
      ProbeOptions options, HttpUrl url, boolean embedded) {
    IdempotencyProbe.Builder b =
        IdempotencyProbe.builder(url)
            .method(options.method())
            .body(options.body())
            .contentType(ProbeOptions.contentTypeOf(options.headers()))
            .keyHeader(options.keyHeader())
            .replayHeader(options.replayHeader())
            .mismatchStatus(options.mismatchStatus())
            .concurrency(options.concurrency())
            .keyRequired(options.keyRequired() || embedded)
            .keyRequiredStatus(options.keyRequiredStatus())
            .maxRequests(options.maxRequests())
            .requestTimeout(options.timeout())
            .resourceId(options.idHeader() != null
                ? ResourceIdExtractor.header(options.idHeader())
                : ResourceIdExtractor.jsonField(options.idField()));
    if (options.otherBody() != null) {
      b.otherBody(options.otherBody());
    }
    if (options.countUrl() != null) {
      b.effectCounter(EffectCounter.url(options.countUrl()));
    }
    for (String header : options.headers()) {
      int colon = header.indexOf(':');
      String name = header.substring(0, colon).trim();
      if (!name.equalsIgnoreCase("Content-Type")) {
        b.header(name, header.substring(colon + 1).trim());
      }
    }
    if (options.retention() != null) {
      b.retention(options.retention(), options.afterRetention());
    } else if (embedded) {
      b.retention(Duration.ofMillis(EMBEDDED_RETENTION_MS), AfterRetention.EXECUTED_AGAIN);
    }
    return b;
  }
}

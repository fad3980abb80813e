package io.github.resilienthttp.examples;

import io.github.resilienthttp.testkit.Flaw;
import io.github.resilienthttp.testkit.probe.AfterRetention;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import okhttp3.HttpUrl;

/**
 * The command line of {@code probe} ({@link ProbeCommand}).
 *
 * @param help print the usage and stop
 * @param url the server to probe, or {@code null} for the embedded one
 * @param flaw the embedded server's flaw ({@link Flaw#NONE} for a correct one); only without url
 * @param method the method of every request
 * @param body the request body
 * @param otherBody the different body of check 2, or {@code null} for the default
 * @param headers extra headers, each {@code Name: value}
 * @param keyHeader the key header name
 * @param replayHeader the replay header name
 * @param idField the JSON member holding the resource id, or {@code null} with idHeader
 * @param idHeader the header holding the resource id, or {@code null}
 * @param mismatchStatus the documented status for a key reused with another body
 * @param concurrency requests of the burst
 * @param keyRequired whether check 5 runs
 * @param keyRequiredStatus the documented status for a request without a key
 * @param retention the documented retention (check 6 runs), or {@code null}
 * @param afterRetention what the server documents after it
 * @param maxRequests the request cap
 * @param countUrl a URL whose answer holds the server's count of effects, or {@code null}
 * @param timeout the timeout of each request
 * @param json print JSON instead of the table
 */
record ProbeOptions(
    boolean help,
    HttpUrl url,
    Flaw flaw,
    String method,
    String body,
    String otherBody,
    List<String> headers,
    String keyHeader,
    String replayHeader,
    String idField,
    String idHeader,
    int mismatchStatus,
    int concurrency,
    boolean keyRequired,
    int keyRequiredStatus,
    Duration retention,
    AfterRetention afterRetention,
    int maxRequests,
    HttpUrl countUrl,
    Duration timeout,
    boolean json) {

  static final String DEFAULT_BODY = "{\"order\":\"probe-order\",\"amount\":1000}";

  static final String USAGE = """
      Usage: java -jar examples/target/resilient-http-demo.jar probe --url URL [options]
             java -jar examples/target/resilient-http-demo.jar probe --embedded [--json]
             java -jar examples/target/resilient-http-demo.jar probe --embedded-flaw FLAW [--json]

      Checks whether a server honours Idempotency-Key: (1) a retry is replayed, (2) the same key
      with another body is rejected, (3) identical requests at one instant execute at most once,
      (4) a lost response is replayed to the retry, (5) a request without key is rejected (with
      --key-required), (6) a retry after the retention behaves as documented (with --retention).
      Prints a pass / fail / cannot tell / n/a table with the evidence, and sends at most the
      printed number of requests, all to URL (it creates resources there: use a staging server).
      A check says CANNOT TELL when the answers do not identify the effect (no resource id, no
      replay header, e.g. 201 {"status":"created"} or 204) and no --count-url is given, or when it
      would exceed --max-requests.
      Exit code: 0 when every check passed (or n/a), 1 when one failed, 3 when none failed but one
      could not tell, 2 for bad arguments.

        --url URL                 the http(s) endpoint that creates a resource, e.g. .../payments
        --embedded                probe an embedded correct payments server on 127.0.0.1
        --embedded-flaw FLAW      probe an embedded broken one: no-dedup, fingerprint-not-checked,
                                  race, replays-different-result, forgets-keys
        --method M                default POST
        --body TEXT|@FILE         the request body, default {"order":"probe-order","amount":1000}
        --other-body TEXT|@FILE   the different body of check 2 (default: body plus a member)
        --content-type TYPE       default application/json
        --header 'Name: value'    an extra header (repeatable), e.g. Authorization
        --key-header NAME         default Idempotency-Key
        --replay-header NAME      default Idempotent-Replayed
        --id-field NAME           the JSON member naming the resource, default id
        --id-header NAME          or a header naming it, e.g. Location
        --mismatch-status N       the server's status for a reused key, default 422
        --concurrency N           requests sent at one instant by check 3: 2..64, default 8
        --key-required            the server rejects a request without key (check 5)
        --key-required-status N   its status for that, default 400
        --retention DURATION      the server's key retention (check 6 waits that long): 500ms,
                                  30s, 10m, 24h or PT1H
        --after-retention WHAT    executed-again (default), replayed or rejected
        --max-requests N          the request cap: 1..1000, default 100; a check that would
                                  exceed it says "cannot tell within the cap"
        --count-url URL           a URL whose answer's first integer is the number of resources
                                  (effects) the server holds: read before and after checks 1-4
        --timeout DURATION        per request, default 10s
        --json                    print the report as JSON
        --help                    print this help
      """;

  private static final String CONTENT_TYPE_DEFAULT = "application/json";

  /** The content type of every request: kept out of the record's list of headers. */
  static String contentTypeOf(List<String> headers) {
    for (String h : headers) {
      if (h.toLowerCase(Locale.ROOT).startsWith("content-type:")) {
        return h.substring(h.indexOf(':') + 1).trim();
      }
    }
    return CONTENT_TYPE_DEFAULT;
  }

  /**
   * Parses {@code args} (those after {@code probe}).
   *
   * @throws IllegalArgumentException with a message for the user when an argument is wrong
   */
  static ProbeOptions parse(String... args) {
    boolean help = false;
    HttpUrl url = null;
    Flaw flaw = null;
    String method = "POST";
    String body = DEFAULT_BODY;
    String otherBody = null;
    List<String> headers = new ArrayList<>();
    String keyHeader = "Idempotency-Key";
    String replayHeader = "Idempotent-Replayed";
    String idField = "id";
    String idHeader = null;
    int mismatchStatus = 422;
    int concurrency = 8;
    boolean keyRequired = false;
    int keyRequiredStatus = 400;
    Duration retention = null;
    AfterRetention afterRetention = null;
    int maxRequests = 100;
    HttpUrl countUrl = null;
    Duration timeout = Duration.ofSeconds(10);
    boolean json = false;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--help", "-h" -> help = true;
        case "--url" -> url = parseUrl(valueOf(args, ++i));
        case "--embedded" -> flaw = flaw == null ? Flaw.NONE : duplicate(arg);
        case "--embedded-flaw" -> flaw = flaw == null ? parseFlaw(valueOf(args, ++i))
            : duplicate(arg);
        case "--method" -> method = valueOf(args, ++i).toUpperCase(Locale.ROOT);
        case "--body" -> body = textOrFile("--body", valueOf(args, ++i));
        case "--other-body" -> otherBody = textOrFile("--other-body", valueOf(args, ++i));
        case "--content-type" -> headers.add("Content-Type: " + valueOf(args, ++i));
        case "--header" -> headers.add(parseHeader(valueOf(args, ++i)));
        case "--key-header" -> keyHeader = valueOf(args, ++i);
        case "--replay-header" -> replayHeader = valueOf(args, ++i);
        case "--id-field" -> idField = valueOf(args, ++i);
        case "--id-header" -> {
          idHeader = valueOf(args, ++i);
          idField = null;
        }
        case "--mismatch-status" -> mismatchStatus = parseInt(arg, valueOf(args, ++i));
        case "--concurrency" -> concurrency = parseInt(arg, valueOf(args, ++i));
        case "--key-required" -> keyRequired = true;
        case "--key-required-status" -> keyRequiredStatus = parseInt(arg, valueOf(args, ++i));
        case "--retention" -> retention = parseDuration(arg, valueOf(args, ++i));
        case "--after-retention" -> afterRetention = parseAfterRetention(valueOf(args, ++i));
        case "--max-requests" -> maxRequests = parseInt(arg, valueOf(args, ++i));
        case "--count-url" -> countUrl = parseUrl(valueOf(args, ++i));
        case "--timeout" -> timeout = parseDuration(arg, valueOf(args, ++i));
        case "--json" -> json = true;
        default -> throw new IllegalArgumentException("unknown argument: " + arg);
      }
    }
    if (!help && (url == null) == (flaw == null)) {
      throw new IllegalArgumentException(
          "give exactly one of --url, --embedded or --embedded-flaw");
    }
    if (afterRetention != null && retention == null) {
      throw new IllegalArgumentException("--after-retention needs --retention");
    }
    if (retention != null && afterRetention == null) {
      afterRetention = AfterRetention.EXECUTED_AGAIN;
    }
    return new ProbeOptions(help, url, flaw == null ? Flaw.NONE : flaw, method, body, otherBody,
        List.copyOf(headers), keyHeader, replayHeader, idField, idHeader, mismatchStatus,
        concurrency, keyRequired, keyRequiredStatus, retention, afterRetention, maxRequests, countUrl,
        timeout, json);
  }

  private static Flaw duplicate(String arg) {
    throw new IllegalArgumentException(arg + ": give --embedded or --embedded-flaw once");
  }

  private static String valueOf(String[] args, int i) {
    if (i >= args.length) {
      throw new IllegalArgumentException(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  private static int parseInt(String option, String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a number but was '" + value + "'");
    }
  }

  private static HttpUrl parseUrl(String value) {
    HttpUrl url = HttpUrl.parse(value);
    if (url == null) {
      throw new IllegalArgumentException("--url must be an http:// or https:// URL but was '"
          + value + "'");
    }
    return url;
  }

  static Flaw parseFlaw(String value) {
    return switch (value) {
      case "no-dedup" -> Flaw.NO_DEDUPLICATION;
      case "fingerprint-not-checked" -> Flaw.FINGERPRINT_NOT_CHECKED;
      case "race" -> Flaw.CHECK_THEN_INSERT_RACE;
      case "replays-different-result" -> Flaw.REPLAYS_DIFFERENT_RESULT;
      case "forgets-keys" -> Flaw.FORGETS_KEYS_AT_ONCE;
      default -> throw new IllegalArgumentException("--embedded-flaw must be one of no-dedup,"
          + " fingerprint-not-checked, race, replays-different-result, forgets-keys but was '"
          + value + "'");
    };
  }

  private static AfterRetention parseAfterRetention(String value) {
    return switch (value) {
      case "executed-again" -> AfterRetention.EXECUTED_AGAIN;
      case "replayed" -> AfterRetention.REPLAYED;
      case "rejected" -> AfterRetention.REJECTED;
      default -> throw new IllegalArgumentException("--after-retention must be executed-again,"
          + " replayed or rejected but was '" + value + "'");
    };
  }

  private static String parseHeader(String value) {
    int colon = value.indexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("--header must look like 'Name: value' but was '"
          + value + "'");
    }
    return value;
  }

  /** 500ms, 30s, 10m, 24h, or an ISO-8601 duration such as PT1H. */
  static Duration parseDuration(String option, String value) {
    try {
      String v = value.trim().toLowerCase(Locale.ROOT);
      if (v.startsWith("pt") || v.startsWith("p")) {
        return Duration.parse(value.trim().toUpperCase(Locale.ROOT));
      }
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      long n = Long.parseLong(v.substring(0, v.length() - 1));
      return switch (v.charAt(v.length() - 1)) {
        case 's' -> Duration.ofSeconds(n);
        case 'm' -> Duration.ofMinutes(n);
        case 'h' -> Duration.ofHours(n);
        default -> throw new NumberFormatException(value);
      };
    } catch (NumberFormatException | DateTimeParseException | StringIndexOutOfBoundsException e) {
      throw new IllegalArgumentException(option + " must be a duration such as 500ms, 30s, 10m,"
          + " 24h or PT1H but was '" + value + "'");
    }
  }

  private static String textOrFile(String option, String value) {
    if (!value.startsWith("@")) {
      return value;
    }
    try {
      return Files.readString(Path.of(value.substring(1)), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException(option + ": cannot read " + value.substring(1) + ": "
          + e.getMessage());
    } catch (UncheckedIOException e) {
      throw new IllegalArgumentException(option + ": cannot read " + value.substring(1));
    }
  }
}

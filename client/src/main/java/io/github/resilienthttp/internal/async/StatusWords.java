package io.github.resilienthttp.internal.async;

import io.github.resilienthttp.PollStatus;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JSON field patterns and state words of {@link
 * io.github.resilienthttp.StatusContract#jsonStatusField(String)}. Not API.
 */
public final class StatusWords {
  public static final Pattern RESOURCE_LOCATION = fieldPattern("resourceLocation");
  private static final Set<String> RUNNING = Set.of("notstarted", "accepted", "queued", "pending",
      "running", "inprogress", "in_progress", "processing");
  private static final Set<String> SUCCEEDED =
      Set.of("succeeded", "success", "completed", "complete", "done");
  private static final Set<String> FAILED = Set.of("failed", "failure", "error");
  private static final Set<String> CANCELED = Set.of("canceled", "cancelled");

  private StatusWords() {}

  /**
   * The pattern of a JSON string field {@code "name" : "value"}: bounded (a value of at most 256
   * characters without quotes or backslashes, at most 16 blanks around the colon), so it cannot
   * backtrack badly on a hostile body. It does not know JSON nesting: the first such field wins.
   */
  public static Pattern fieldPattern(String field) {
    if (field == null || !field.matches("[A-Za-z0-9_.$-]{1,64}")) {
      throw new IllegalArgumentException("field must be 1 to 64 of [A-Za-z0-9_.$-]");
    }
    return Pattern.compile("\"" + Pattern.quote(field)
        + "\"[ \\t\\r\\n]{0,16}:[ \\t\\r\\n]{0,16}\"([^\"\\\\]{0,256})\"");
  }

  public static String stringField(Pattern pattern, String body) {
    if (body == null || body.isEmpty()) {
      return null;
    }
    Matcher m = pattern.matcher(body);
    return m.find() ? m.group(1) : null;
  }

  public static PollStatus.State of(String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    if (RUNNING.contains(v)) {
      return PollStatus.State.RUNNING;
    } else if (SUCCEEDED.contains(v)) {
      return PollStatus.State.SUCCEEDED;
    } else if (FAILED.contains(v)) {
      return PollStatus.State.FAILED;
    } else if (CANCELED.contains(v)) {
      return PollStatus.State.CANCELED;
    }
    return null;
  }
}

package io.github.resilienthttp.internal.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.internal.guard.RateLimitHeaders.Quota;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import okhttp3.Headers;
import org.junit.jupiter.api.Test;

class RateLimitHeadersTest {
  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  private static Optional<Quota> read(String... namesAndValues) {
    return RateLimitHeaders.read(Headers.of(namesAndValues), NOW);
  }

  @Test
  void theIetfStructuredFieldGivesTheLeastRemainingItem() {
    assertThat(read("RateLimit", "\"default\";r=50;t=30"))
        .contains(new Quota(50, Duration.ofSeconds(30)));
    assertThat(read("RateLimit", "\"minute\";r=7;t=12, \"day\";r=900;t=3600"))
        .contains(new Quota(7, Duration.ofSeconds(12)));
    assertThat(read("RateLimit", "\"day\";r=900;t=3600, \"minute\";r=0;t=9"))
        .contains(new Quota(0, Duration.ofSeconds(9)));
    assertThat(read("RateLimit", "\"default\";r=3")).contains(new Quota(3, Duration.ZERO));
  }

  @Test
  void theEarlierDraftsAndTheCommonXHeadersAreRead() {
    assertThat(read("RateLimit-Remaining", "0", "RateLimit-Reset", "20"))
        .contains(new Quota(0, Duration.ofSeconds(20)));
    assertThat(read("X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "60"))
        .contains(new Quota(4, Duration.ofSeconds(60)));
    long epoch = NOW.getEpochSecond() + 90; // GitHub's form: a Unix time
    assertThat(read("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", Long.toString(epoch)))
        .contains(new Quota(0, Duration.ofSeconds(90)));
    assertThat(read("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", Long.toString(epoch - 500)))
        .contains(new Quota(0, Duration.ZERO)); // a reset in the past: now
  }

  @Test
  void theStructuredFieldWinsOverTheOthers() {
    assertThat(read("RateLimit", "\"default\";r=5;t=1", "X-RateLimit-Remaining", "0",
        "X-RateLimit-Reset", "100")).contains(new Quota(5, Duration.ofSeconds(1)));
  }

  @Test
  void garbageAndAbsurdValuesAreIgnored() {
    assertThat(read()).isEmpty();
    assertThat(read("X-RateLimit-Remaining", "-1", "X-RateLimit-Reset", "5")).isEmpty();
    assertThat(read("X-RateLimit-Remaining", "lots")).isEmpty();
    assertThat(read("RateLimit", "\"default\";r=x;t=5")).isEmpty();
    assertThat(read("RateLimit", ";;;,,,=")).isEmpty();
    assertThat(read("X-RateLimit-Remaining", "1", "X-RateLimit-Reset", "soon"))
        .contains(new Quota(1, Duration.ZERO));
    // Beyond an hour is absurd for pacing: ignored, so one bad answer cannot stop a target for a day.
    assertThat(read("RateLimit-Remaining", "0", "RateLimit-Reset", "999999999999")).isEmpty();
    assertThat(read("RateLimit-Remaining", "0", "RateLimit-Reset", "3601")).isEmpty();
    assertThat(read("RateLimit-Remaining", "0", "RateLimit-Reset", "3600"))
        .contains(new Quota(0, Duration.ofHours(1)));
    assertThat(read("RateLimit", "\"d\";r=0;t=86401")).isEmpty();
    assertThat(read("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "86401")).isEmpty();
    assertThat(read("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "9999999999")).isEmpty();
    assertThat(read("X-RateLimit-Remaining", "99999999999999999999999")).isEmpty();
  }

  @Test
  void anXRateLimitResetInEpochMillisecondsIsReadAsMilliseconds() {
    long in30s = NOW.toEpochMilli() + 30_000;
    assertThat(read("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", Long.toString(in30s)))
        .contains(new Quota(0, Duration.ofSeconds(30)));
    long inADay = NOW.toEpochMilli() + 86_400_000;
    assertThat(read("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", Long.toString(inADay)))
        .isEmpty();
  }

  @Property(tries = 2_000)
  void anyHeaderValueIsReadWithoutThrowing(@ForAll String value, @ForAll String reset) {
    String safeValue = value.replaceAll("[^\\x20-\\x7e]", "");
    String safeReset = reset.replaceAll("[^\\x20-\\x7e]", "");
    for (String name : new String[] {"RateLimit", "RateLimit-Remaining", "X-RateLimit-Remaining"}) {
      Optional<Quota> q = RateLimitHeaders.read(new Headers.Builder().add(name, safeValue)
          .add("RateLimit-Reset", safeReset).add("X-RateLimit-Reset", safeReset).build(), NOW);
      q.ifPresent(quota -> {
        assertThat(quota.remaining()).isNotNegative();
        assertThat(quota.reset()).isBetween(Duration.ZERO, RateLimitHeaders.MAX_RESET);
      });
    }
  }
}

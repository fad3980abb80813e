package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Optional;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {
  private static final Instant NOW = Instant.parse("1994-11-06T08:49:30.250Z");

  @Test
  void deltaSeconds() {
    assertThat(RetryAfter.parse("0", NOW)).contains(Duration.ZERO);
    assertThat(RetryAfter.parse("120", NOW)).contains(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse(" 7 ", NOW)).contains(Duration.ofSeconds(7));
  }

  @Test
  void allThreeHttpDateFormatsAreRoundedUpNeverEarly() {
    // 08:49:37 GMT is 6.75 s after NOW.
    Duration expected = Duration.ofMillis(6750);
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).contains(expected);
    assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", NOW)).contains(expected);
    assertThat(RetryAfter.parse("Sun Nov  6 08:49:37 1994", NOW)).contains(expected);
  }

  @Test
  void subMillisecondRemaindersRoundUp() {
    Instant now = Instant.parse("2026-11-29T10:00:00.000000001Z");
    assertThat(RetryAfter.parse("Sun, 29 Nov 2026 10:00:01 GMT", now)).contains(Duration.ofMillis(1000));
  }

  @Test
  void pastDateMeansNow() {
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", NOW)).contains(Duration.ZERO);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "-1", "1.5", "soon", "0x10", "+5", "Sun, 32 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 08:49:37 PST", "1e3", "١٢"})
  void malformedOrNegativeValuesAreIgnored(String value) {
    assertThat(RetryAfter.parse(value, NOW)).isEmpty();
  }

  @Test
  void nullAndOverlongValuesAreIgnored() {
    assertThat(RetryAfter.parse(null, NOW)).isEmpty();
    assertThat(RetryAfter.parse("9".repeat(100), NOW)).isEmpty();
  }

  @Test
  void absurdlyLargeValuesSaturate() {
    assertThat(RetryAfter.parse("86400000", NOW)).contains(Duration.ofDays(1000));
    assertThat(RetryAfter.parse("99999999999", NOW)).contains(RetryAfter.MAX);
    assertThat(RetryAfter.parse("999999999999999999999", NOW)).contains(RetryAfter.MAX);
    assertThat(RetryAfter.parse("9223372036854775807", NOW)).contains(RetryAfter.MAX);
  }

  @Property(tries = 500)
  void imfFixdateRoundTrips(@ForAll @LongRange(min = 0, max = 4_000_000_000L) long epochSecond,
      @ForAll @LongRange(min = 0, max = 999) long nowMillis) {
    Instant date = Instant.ofEpochSecond(epochSecond);
    Instant now = Instant.ofEpochSecond(1_700_000_000L).plusMillis(nowMillis);
    String header = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
        .withZone(ZoneOffset.UTC).format(date);
    Optional<Duration> parsed = RetryAfter.parse(header, now);
    Duration expected = date.isAfter(now) ? Duration.between(now, date) : Duration.ZERO;
    assertThat(parsed).contains(expected);
  }

  @Property(tries = 1000)
  void neverThrowsOnAnyInput(@ForAll String value) {
    Optional<Duration> parsed = RetryAfter.parse(value, NOW);
    parsed.ifPresent(d -> assertThat(d).isGreaterThanOrEqualTo(Duration.ZERO));
  }
}

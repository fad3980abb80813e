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

  @ParameterizedTest
  @ValueSource(strings = {
      "Tue, 1 Dec 2026 08:25:13 GMT",      // one-digit day: Java's RFC_1123_DATE_TIME on days 1-9
      "Tue, 01 Dec 2026 08:25:13 UTC",
      "Tue, 01 Dec 2026 08:25:13 +0000",
      "Tue, 01 Dec 2026 09:25:13 +0100",
      "Mon, 01 Dec 2026 08:25:13 GMT",     // wrong weekday: ignored (RFC 9110 §5.6.7)
      "01 Dec 2026 08:25:13 GMT",          // no weekday
      "tue, 01 dec 2026 08:25:13 gmt",
      "Tuesday, 01-Dec-26 08:25:13 GMT",   // RFC 850
      "Tuesday, 1-Dec-26 08:25:13 GMT",
      "Tue Dec  1 08:25:13 2026",          // asctime
      "Tue Dec 1 08:25:13 2026"})
  void commonNonImfFormsAreRead(String value) {
    Instant now = Instant.parse("2026-12-01T08:25:10Z");
    assertThat(RetryAfter.parse(value, now)).contains(Duration.ofSeconds(3));
  }

  @ParameterizedTest
  @ValueSource(strings = {"Tue, 31 Apr 2026 08:25:13 GMT", "Tue, 01 Dex 2026 08:25:13 GMT",
      "Tue, 01 Dec 2026 25:25:13 GMT", "Tue, 01 Dec 2026 08:25 GMT", "Tue, 01 Dec 2026 08:25:13",
      "Tue, 01 Dec 2026 08:25:13 +2500", "Tue, 01 Dec 2026 08:25:13 +0060",
      "Tue, 01 Dec 2026 08:25:13 GMT trailing",
      "Tue, 001 Dec 2026 08:25:13 GMT", "2026-12-01T08:25:13Z"})
  void garbageDatesAreIgnored(String value) {
    assertThat(RetryAfter.parse(value, Instant.parse("2026-12-01T08:25:10Z"))).isEmpty();
  }

  @Property(tries = 500)
  void javaRfc1123RoundTripsWithAnyWeekdayAndZoneSpelling(
      @ForAll @LongRange(min = 0, max = 4_000_000_000L) long epochSecond,
      @ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 6) int weekdayShift,
      @ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 2) int zoneSpelling) {
    Instant date = Instant.ofEpochSecond(epochSecond);
    Instant now = Instant.ofEpochSecond(epochSecond - 10);
    // What Java servers write: RFC_1123_DATE_TIME, one-digit day on days 1 to 9.
    String header = DateTimeFormatter.RFC_1123_DATE_TIME.format(date.atZone(ZoneOffset.UTC));
    String[] days = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    header = days[weekdayShift] + header.substring(3);
    header = header.replace("GMT", new String[] {"GMT", "UTC", "+0000"}[zoneSpelling]);
    assertThat(RetryAfter.parse(header, now)).contains(Duration.ofSeconds(10));
  }

  @Property(tries = 300)
  void rfc850AndAsctimeRoundTrip(@ForAll @LongRange(min = 946_684_800L, max = 3_000_000_000L)
      long epochSecond) {
    Instant date = Instant.ofEpochSecond(epochSecond);
    Instant now = Instant.ofEpochSecond(epochSecond - 5);
    String rfc850 = DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US)
        .withZone(ZoneOffset.UTC).format(date);
    String asctime = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US)
        .withZone(ZoneOffset.UTC).format(date);
    assertThat(RetryAfter.parse(rfc850, now)).as(rfc850).contains(Duration.ofSeconds(5));
    assertThat(RetryAfter.parse(asctime, now)).as(asctime).contains(Duration.ofSeconds(5));
  }

  @Property(tries = 1000)
  void mangledDatesNeverThrow(@ForAll @LongRange(min = 0, max = 4_000_000_000L) long epochSecond,
      @ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 28) int cut,
      @ForAll char noise) {
    String header = DateTimeFormatter.RFC_1123_DATE_TIME
        .format(Instant.ofEpochSecond(epochSecond).atZone(ZoneOffset.UTC));
    int at = Math.min(cut, header.length());
    String mangled = header.substring(0, at) + noise + header.substring(at);
    Optional<Duration> parsed = RetryAfter.parse(mangled, NOW);
    parsed.ifPresent(d -> assertThat(d).isGreaterThanOrEqualTo(Duration.ZERO));
  }
}

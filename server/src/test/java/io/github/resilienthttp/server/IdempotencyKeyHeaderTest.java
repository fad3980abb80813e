package io.github.resilienthttp.server;

import static io.github.resilienthttp.server.IdempotencyKeyHeader.Format.STRING;
import static io.github.resilienthttp.server.IdempotencyKeyHeader.Format.STRING_OR_TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class IdempotencyKeyHeaderTest {

  @Test
  void theDraftsStructuredStringIsAcceptedInBothFormatsAndUnquoted() {
    assertThat(IdempotencyKeyHeader.parse("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"", STRING))
        .contains("8e03978e-40d5-43e8-bc93-6894a57f9324");
    assertThat(IdempotencyKeyHeader.parse(" \"a b\\\"c\\\\d\" ", STRING_OR_TOKEN)).contains("a b\"c\\d");
    // RFC 8941 allows parameters on an Item; they are ignored.
    assertThat(IdempotencyKeyHeader.parse("\"abc\";v=1", STRING)).contains("abc");
  }

  @Test
  void aBareKeyIsAcceptedOnlyInTheLenientFormat() {
    assertThat(IdempotencyKeyHeader.parse("8e03978e-40d5", STRING_OR_TOKEN)).contains("8e03978e-40d5");
    assertThat(IdempotencyKeyHeader.parse("8e03978e-40d5", STRING)).isEmpty();
    assertThat(IdempotencyKeyHeader.problem("8e03978e-40d5", STRING)).contains("structured-field string");
  }

  @Test
  void malformedValuesAreRefusedWithAReason() {
    assertThat(IdempotencyKeyHeader.problem("", STRING_OR_TOKEN)).contains("empty");
    assertThat(IdempotencyKeyHeader.problem("\"\"", STRING)).contains("empty");
    assertThat(IdempotencyKeyHeader.problem("\"abc", STRING)).contains("not closed");
    assertThat(IdempotencyKeyHeader.problem("\"a\\nb\"", STRING)).contains("invalid escape");
    assertThat(IdempotencyKeyHeader.problem("\"a\u00e9\"", STRING)).contains("invalid");
    assertThat(IdempotencyKeyHeader.problem("\"a\", \"b\"", STRING)).contains("list");
    assertThat(IdempotencyKeyHeader.problem("a b", STRING_OR_TOKEN)).contains("index 1");
    assertThat(IdempotencyKeyHeader.problem("a,b", STRING_OR_TOKEN)).contains("index 1");
    assertThat(IdempotencyKeyHeader.problem("k".repeat(256), STRING_OR_TOKEN)).contains("longer than 255");
    assertThat(IdempotencyKeyHeader.problem("\"" + "k".repeat(256) + "\"", STRING)).contains("longer than 255");
    assertThat(IdempotencyKeyHeader.problem("k".repeat(255), STRING_OR_TOKEN)).isNull();
  }
}

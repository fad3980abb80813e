package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class IdempotencyKeyPolicyTest {

  @Test
  void newKeysAreRandomUuidVersion4() {
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      String key = IdempotencyKeyPolicy.newKey();
      UUID uuid = UUID.fromString(key);
      assertThat(uuid.version()).isEqualTo(4);
      assertThat(uuid.variant()).isEqualTo(2);
      keys.add(key);
    }
    assertThat(keys).hasSize(1000);
  }

  @Test
  void defaultsSendForNonIdempotentMethodsOnly() {
    IdempotencyKeyPolicy p = IdempotencyKeyPolicy.defaults();
    assertThat(p.headerName()).isEqualTo("Idempotency-Key");
    assertThat(p.sendsKeyFor("POST")).isTrue();
    assertThat(p.sendsKeyFor("PATCH")).isTrue();
    for (String m : new String[] {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"}) {
      assertThat(p.sendsKeyFor(m)).as(m).isFalse();
    }
    assertThat(IdempotencyKeyPolicy.builder().send(IdempotencyKeyPolicy.Send.ALWAYS).build()
        .sendsKeyFor("GET")).isTrue();
    assertThat(IdempotencyKeyPolicy.builder().send(IdempotencyKeyPolicy.Send.NEVER).build()
        .sendsKeyFor("POST")).isFalse();
  }

  @Test
  void formats() {
    assertThat(IdempotencyKeyPolicy.defaults().headerValue("abc")).isEqualTo("abc");
    IdempotencyKeyPolicy sf = IdempotencyKeyPolicy.builder()
        .format(IdempotencyKeyPolicy.Format.STRUCTURED_STRING).build();
    assertThat(sf.headerValue("abc")).isEqualTo("\"abc\"");
    assertThat(sf.headerValue("a\"b\\c")).isEqualTo("\"a\\\"b\\\\c\"");
  }

  @Test
  void keyValidationNamesTheRule() {
    assertThat(IdempotencyKeyPolicy.validateKey("x")).isEqualTo("x");
    assertThat(IdempotencyKeyPolicy.validateKey("k".repeat(255))).hasSize(255);
    assertThatThrownBy(() -> IdempotencyKeyPolicy.validateKey(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1..255 visible ASCII").hasMessageContaining("length was 0");
    assertThatThrownBy(() -> IdempotencyKeyPolicy.validateKey("k".repeat(256)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("length was 256");
    assertThatThrownBy(() -> IdempotencyKeyPolicy.validateKey("a b"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("index 1 was U+0020");
    assertThatThrownBy(() -> IdempotencyKeyPolicy.validateKey("é"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+00E9");
    assertThatThrownBy(() -> IdempotencyKeyPolicy.validateKey("a\nb"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+000A");
  }

  @Test
  void headerNameMustBeAToken() {
    assertThat(IdempotencyKeyPolicy.builder().headerName("X-Request-Key").build().headerName())
        .isEqualTo("X-Request-Key");
    assertThatThrownBy(() -> IdempotencyKeyPolicy.builder().headerName("Bad Header").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("headerName").hasMessageContaining("'Bad Header'");
  }

  @Test
  void shortenKeepsEightCharacters() {
    assertThat(IdempotencyKeyPolicy.shorten("0123456789abcdef")).isEqualTo("01234567");
    // A short key is never logged whole: at most half of it.
    assertThat(IdempotencyKeyPolicy.shorten("abc")).isEqualTo("a");
    assertThat(IdempotencyKeyPolicy.shorten("order-42")).isEqualTo("orde");
  }

  @Test
  void reservedHeadersCannotCarryTheKey() {
    for (String name : new String[] {"Authorization", "content-length", "Host", "Cookie"}) {
      assertThatThrownBy(() -> IdempotencyKeyPolicy.builder().headerName(name).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("headerName").hasMessageContaining("'" + name + "'");
    }
  }

  @Test
  void aStructuredStringHeaderCarriesTheKeyInsideTheQuotes() {
    IdempotencyKeyPolicy sf = IdempotencyKeyPolicy.builder()
        .format(IdempotencyKeyPolicy.Format.STRUCTURED_STRING).build();
    assertThat(sf.keyFromHeader("\"abc\"")).isEqualTo("abc");
    assertThat(sf.keyFromHeader("\"a\\\"b\\\\c\"")).isEqualTo("a\"b\\c");
    assertThat(sf.headerValue(sf.keyFromHeader("\"a\\\"b\"")))
        .isEqualTo("\"a\\\"b\"");
    assertThat(sf.keyFromHeader("bare")).isEqualTo("bare");
    assertThat(IdempotencyKeyPolicy.defaults().keyFromHeader("\"abc\"")).isEqualTo("\"abc\"");
  }
}

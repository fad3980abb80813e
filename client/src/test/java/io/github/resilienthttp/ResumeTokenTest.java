package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.time.Instant;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Test;

/** The resume token as text and as a serialized value; what it holds and what it never holds. */
class ResumeTokenTest {
  private static final Instant MADE = Instant.parse("2026-12-01T10:00:00.123Z");

  private static ResumeToken accepted() {
    return ResumeToken.forSubmit("POST", HttpUrl.get("https://api.example/payments"), "key-123",
        true, MADE).accepted(HttpUrl.get("https://api.example/ops/7?sig=secret"),
        HttpUrl.get("https://api.example/payments/7"));
  }

  @Test
  void printsAndParsesAsOneLineOfUrlSafeText() {
    ResumeToken t = accepted();
    String text = t.toText();
    assertThat(text).startsWith("rhr1.").matches("[A-Za-z0-9._-]+");
    ResumeToken back = ResumeToken.parse(text);
    assertThat(back).isEqualTo(t);
    assertThat(back.method()).isEqualTo("POST");
    assertThat(back.url()).isEqualTo(HttpUrl.get("https://api.example/payments"));
    assertThat(back.statusUrl()).contains(HttpUrl.get("https://api.example/ops/7?sig=secret"));
    assertThat(back.resultUrl()).contains(HttpUrl.get("https://api.example/payments/7"));
    assertThat(back.idempotencyKey()).isEqualTo("key-123");
    assertThat(back.idempotencyKeySent()).isTrue();
    assertThat(back.keyCreatedAt()).isEqualTo(MADE);
    assertThat(back.isAccepted()).isTrue();
  }

  @Test
  void aTokenNotYetAcceptedHasNoStatusResource() {
    ResumeToken t = ResumeToken.parse(ResumeToken.forSubmit("PUT",
        HttpUrl.get("http://localhost/x"), "k", false, MADE).toText());
    assertThat(t.isAccepted()).isFalse();
    assertThat(t.statusUrl()).isEmpty();
    assertThat(t.idempotencyKeySent()).isFalse();
  }

  @Test
  void toStringRedactsTheUrlsAndShortensTheKey() {
    String s = accepted().toString();
    assertThat(s).doesNotContain("secret").doesNotContain("key-123");
  }

  @Test
  void isSerializable() throws IOException, ClassNotFoundException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(accepted());
    }
    try (ObjectInputStream in = new ObjectInputStream(
        new ByteArrayInputStream(bytes.toByteArray()))) {
      assertThat(in.readObject()).isEqualTo(accepted());
    }
  }

  @Test
  void rejectsWhatIsNotAToken() {
    assertThatThrownBy(() -> ResumeToken.parse("hello")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ResumeToken.parse("rhr1.!!!")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ResumeToken.parse("rhr1.aGVsbG8")).isInstanceOf(IllegalArgumentException.class);
    String bad = "rhr1." + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(
        "POST\nftp://x\n\n\nk\n1\n0".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThatThrownBy(() -> ResumeToken.parse(bad)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theFailureOfAnAcceptedOperationCarriesItsToken() {
    ResumeToken t = accepted();
    PollFailedException e = new PollFailedException("x", t, 3, "poll-failed", 500, null);
    assertThat(ResumableFailure.of(new IOException("wrapper", e))).contains(t);
    assertThat(ResumableFailure.of(new IOException("plain"))).isEmpty();
  }
}

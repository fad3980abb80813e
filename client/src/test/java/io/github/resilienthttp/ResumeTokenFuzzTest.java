package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;

/**
 * Random and mutated tokens, as text and as serialized bytes: parsing and deserialization give a
 * token or the typed refusal, never another exception; and no mutation of a signed token yields a
 * different token that the client accepts (the signature covers every field).
 */
class ResumeTokenFuzzTest {
  private static final byte[] KEY = "k".repeat(32).getBytes(StandardCharsets.US_ASCII);
  private static final OkHttpClient OK_HTTP = new OkHttpClient();
  private static final ResilientHttpClient CLIENT = ResilientHttpClient.wrap(OK_HTTP)
      .resumeTokenKey(KEY).build();
  /** Signs the hand-built token: the migration path (unsigned tokens accepted for one origin). */
  private static final ResumeToken SIGNED = ResilientHttpClient.wrap(OK_HTTP).resumeTokenKey(KEY)
      .acceptUnsignedResumeTokens(java.util.List.of(HttpUrl.get("https://api.example/")))
      .build().verifyResumeToken(unsigned());
  /** What an application should allow when it deserializes tokens (JEP 290). */
  private static final ObjectInputFilter FILTER = ObjectInputFilter.Config.createFilter(
      "maxbytes=65536;maxdepth=4;maxrefs=32;io.github.resilienthttp.ResumeToken*;java.lang.*;"
          + "java.time.*;!*");

  private static ResumeToken unsigned() {
    return ResumeToken.forSubmit("POST", HttpUrl.get("https://api.example/payments"), "key-123",
        true, Instant.parse("2026-01-01T00:00:00Z"))
        .accepted(HttpUrl.get("https://api.example/ops/7"), null)
        .withCancelUrl(HttpUrl.get("https://api.example/ops/7/cancel"));
  }

  /** Parses {@code text}; what parses must print and parse back to an equal token. */
  private static Throwable parseOutcome(String text) {
    return catchThrowable(() -> {
      ResumeToken t = ResumeToken.parse(text);
      assertThat(ResumeToken.parse(t.toText())).isEqualTo(t); // what parses, prints and re-parses
    });
  }

  @Property(tries = 2000)
  void randomTextIsATokenOrTheTypedRefusal(@ForAll("texts") String text) {
    Throwable t = parseOutcome(text);
    if (t != null) {
      assertThat(t).isInstanceOf(InvalidResumeTokenException.class);
    }
  }

  @Provide
  Arbitrary<String> texts() {
    Arbitrary<String> any = Arbitraries.strings().ofMaxLength(200);
    Arbitrary<String> b64 = Arbitraries.strings().withChars(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.").ofMaxLength(300);
    Arbitrary<String> fields = Arbitraries.strings().ofMaxLength(40).list().ofMaxSize(9)
        .map(l -> String.join("\n", l))
        .map(s -> Base64.getUrlEncoder().withoutPadding().encodeToString(
            s.getBytes(StandardCharsets.UTF_8)));
    return Arbitraries.oneOf(any, b64.map(s -> "rhr2." + s), b64.map(s -> "rhr1." + s),
        fields.map(s -> "rhr1." + s), fields.map(s -> "rhr2." + s + "." + "A".repeat(43)));
  }

  @Property(tries = 3000)
  void aMutatedSignedTokenIsRefusedOrUnchanged(@ForAll @IntRange(min = 0, max = 400) int at,
      @ForAll("replacements") char c, @ForAll boolean insert) {
    String text = SIGNED.toText();
    int i = at % (text.length() + 1);
    String mutated = insert ? text.substring(0, i) + c + text.substring(i)
        : i == text.length() ? text.substring(0, i - 1) : text.substring(0, i) + c
            + text.substring(i + 1);
    ResumeToken parsed;
    try {
      parsed = ResumeToken.parse(mutated);
    } catch (InvalidResumeTokenException e) {
      assertThat(e.reason()).isEqualTo(InvalidResumeTokenException.MALFORMED);
      return;
    }
    Throwable refused = catchThrowable(() -> CLIENT.verifyResumeToken(parsed));
    if (refused == null) {
      assertThat(parsed).isEqualTo(SIGNED); // accepted only when nothing that matters changed
    } else {
      assertThat(refused).isInstanceOf(InvalidResumeTokenException.class);
    }
  }

  @Provide
  Arbitrary<Character> replacements() {
    return Arbitraries.oneOf(Arbitraries.chars().with(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."),
        Arbitraries.chars());
  }

  private static byte[] serialize(Object o) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(o);
    }
    return bytes.toByteArray();
  }

  private static Object deserialize(byte[] bytes) throws IOException, ClassNotFoundException {
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
      in.setObjectInputFilter(FILTER);
      return in.readObject();
    }
  }

  @Property(tries = 3000)
  void mutatedSerializedBytesGiveATokenOrAnIoRefusal(@ForAll @IntRange(min = 0, max = 2000) int at,
      @ForAll byte value, @ForAll boolean signed) throws IOException {
    byte[] bytes = serialize(signed ? SIGNED : unsigned());
    bytes[at % bytes.length] = value;
    Object back;
    try {
      back = deserialize(bytes);
    } catch (IOException | ClassNotFoundException e) {
      return; // the stream's own refusals (corrupt, filtered) and the token's InvalidObjectException
    } catch (RuntimeException e) {
      // ObjectInputStream itself can fail unchecked on a corrupt stream (a NullPointerException on a
      // mangled class descriptor, before any class's code runs). That is the JDK's, not the token's:
      // the token's own code must only ever refuse with InvalidObjectException.
      assertThat(e.getStackTrace()).noneMatch(f -> f.getClassName().equals(ResumeToken.class.getName())
          || f.getClassName().startsWith(ResumeToken.class.getName() + "$"));
      return;
    }
    if (back instanceof ResumeToken t) {
      Throwable refused = catchThrowable(() -> CLIENT.verifyResumeToken(t));
      if (refused == null) {
        assertThat(t).isEqualTo(signed ? SIGNED : unsigned());
        assertThat(signed).isTrue(); // an unsigned token is never accepted without the opt-in
      } else {
        assertThat(refused).isInstanceOf(InvalidResumeTokenException.class);
      }
    }
  }

  @Property(tries = 500)
  void serializedTextThatIsNotATokenIsAnInvalidObject(@ForAll("texts") String text)
      throws Exception {
    // A hand-made serial form: the token's serialized text replaced.
    byte[] bytes = serialize(SIGNED);
    String original = SIGNED.toText();
    String body = new String(bytes, StandardCharsets.ISO_8859_1);
    int i = body.indexOf(original);
    assertThat(i).isPositive();
    String replaced = text.chars().allMatch(ch -> ch < 0x80) && text.length() < 0xFFFF ? text : "x";
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(bytes, 0, i - 2);
    out.write(replaced.length() >> 8);
    out.write(replaced.length());
    out.write(replaced.getBytes(StandardCharsets.US_ASCII));
    out.write(bytes, i + original.length(), bytes.length - i - original.length());
    Throwable t = catchThrowable(() -> deserialize(out.toByteArray()));
    if (t != null) {
      assertThat(t).isInstanceOf(InvalidObjectException.class)
          .hasCauseInstanceOf(InvalidResumeTokenException.class);
    }
  }
}

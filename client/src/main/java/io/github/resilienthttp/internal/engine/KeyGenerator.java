package io.github.resilienthttp.internal.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.UUID;

/**
 * New idempotency keys for one client: random UUIDs, version 4 (RFC 9562 §5.4), in their usual
 * 36-character form, like {@link UUID#randomUUID()}.
 *
 * <p>The bits come from a {@code DRBG} {@link SecureRandom} (NIST SP 800-90A Hash_DRBG, seeded by
 * the JDK from the operating system), drawn {@value #KEYS_PER_DRAW} keys at a time, so that the
 * DRBG's cost per draw is spread thin: less than half the time and the allocation of
 * {@link UUID#randomUUID()}, whose one shared {@code NativePRNG} mixes in bytes from
 * {@code /dev/urandom} under a lock (0.08 against 0.19 µs, 84 against 176 bytes per key on the
 * benchmark machine; {@code CallerOverhead} in {@code BENCHMARKS.md}). A client owns
 * its generator, so clients do not share a lock. Keys name intents and are not secrets; buffering
 * future keys' bits in memory is therefore harmless. Thread-safe.
 */
public final class KeyGenerator {
  static final int KEYS_PER_DRAW = 64;
  private static final VarHandle LONG_AT =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private final SecureRandom random;
  private final byte[] bits = new byte[16 * KEYS_PER_DRAW];
  private int next = bits.length;

  KeyGenerator() {
    SecureRandom r;
    try {
      r = SecureRandom.getInstance("DRBG");
    } catch (NoSuchAlgorithmException e) {
      r = new SecureRandom(); // every Java 9+ runtime has DRBG; this is only a safety net
    }
    this.random = r;
  }

  /**
   * A new key.
   *
   * @return a random version 4 UUID string, such as {@code 3b241101-e2bb-4255-8caf-4136c566a962}
   */
  String next() {
    long msb;
    long lsb;
    synchronized (this) {
      if (next == bits.length) {
        random.nextBytes(bits);
        next = 0;
      }
      msb = (long) LONG_AT.get(bits, next);
      lsb = (long) LONG_AT.get(bits, next + 8);
      next += 16;
    }
    msb = (msb & ~0xF000L) | 0x4000L; // version 4
    lsb = (lsb & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L; // variant 10 (RFC 9562)
    return new UUID(msb, lsb).toString();
  }
}

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
 * {@code /dev/urandom} under a lock (0.06 against 0.18 µs, 81 against 176 bytes per key on the
 * benchmark machine; {@code CallerOverhead} in {@code BENCHMARKS.md}). A client owns
 * its generator, and each thread draws into a buffer of its own, so that callers share no lock or
 * write per key: only the DRBG's own lock, once per {@value #KEYS_PER_DRAW} keys of one thread.
 * Keys name intents and are not secrets; buffering future keys' bits in memory is therefore
 * harmless. A thread's buffer (4 KiB) lives as long as the thread and the generator do. Thread-safe.
 */
public final class KeyGenerator {
  static final int KEYS_PER_DRAW = 256;
  private static final VarHandle LONG_AT =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private final SecureRandom random;
  /** Each thread's buffered bits: per generator, not static, so a discarded client frees them. */
  private final ThreadLocal<Draw> draws = ThreadLocal.withInitial(Draw::new);

  /** One thread's bits for its next keys; used by that thread only. */
  private static final class Draw {
    final byte[] bits = new byte[16 * KEYS_PER_DRAW];
    int next = bits.length;
  }

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
    Draw d = draws.get();
    if (d.next == d.bits.length) {
      random.nextBytes(d.bits);
      d.next = 0;
    }
    long msb = (long) LONG_AT.get(d.bits, d.next);
    long lsb = (long) LONG_AT.get(d.bits, d.next + 8);
    d.next += 16;
    msb = (msb & ~0xF000L) | 0x4000L; // version 4
    lsb = (lsb & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L; // variant 10 (RFC 9562)
    return new UUID(msb, lsb).toString();
  }
}

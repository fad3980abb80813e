package io.github.resilienthttp.examples;

import com.sun.net.httpserver.HttpServer;
import io.github.resilienthttp.callbacks.CallbackReceiver;
import io.github.resilienthttp.callbacks.CallbackResponse;
import io.github.resilienthttp.callbacks.CallbackVerifier;
import io.github.resilienthttp.callbacks.JdbcProcessingStore;
import io.github.resilienthttp.callbacks.StandardWebhooksScheme;
import io.github.resilienthttp.callbacks.testkit.CallbackSender.Kind;
import io.github.resilienthttp.callbacks.testkit.CallbackSender;
import io.github.resilienthttp.callbacks.testkit.SenderReport;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.h2.jdbcx.JdbcConnectionPool;

/**
 * A payments webhook receiver that charges once under a hostile sender.
 *
 * <p>The receiver is the JDK's HTTP server on 127.0.0.1 in front of a {@link CallbackReceiver}:
 * Standard Webhooks signatures (with a rotated secret accepted beside the old one), processing records
 * in an embedded H2 database, and a handler that inserts a row into {@code charges} on the same
 * transaction that records the event as processed. The ledger behind the handler fails the first time
 * for every tenth event, after it inserted the charge: the transaction rolls back, the sender gets 500
 * and redelivers. The sender ({@link CallbackSender}) sends every event at least once and adds
 * duplicates, reordering, short delays, stale replays, forgeries and deliveries signed with the new
 * secret. Exit code 0 when every event was charged exactly once and nothing hostile got through.
 */
public final class CallbackReceiverExample {
  static final String OLD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  static final String NEW_SECRET = "whsec_c2VjcmV0LW9mLWEtcm90YXRlZC1lbmRwb2ludA==";
  private static final Pattern AMOUNT = Pattern.compile("\"amount\":(\\d+)");

  /**
   * What one run did.
   *
   * @param events distinct events
   * @param report what the sender sent and got
   * @param charges rows in {@code charges}
   * @param chargedEvents distinct events in {@code charges}
   * @param ledgerFailures handler runs that failed after inserting (rolled back)
   * @param handlerRuns handler runs in total
   */
  public record Result(int events, SenderReport report, long charges, long chargedEvents,
      int ledgerFailures, int handlerRuns) {
    /** {@return charges beyond one per event} */
    public long duplicateCharges() {
      return charges - chargedEvents;
    }

    /** {@return true when every event was charged once and no hostile delivery was accepted} */
    public boolean chargedOnce() {
      return chargedEvents == events && duplicateCharges() == 0 && report.unacknowledgedEvents().isEmpty()
          && !report.anyHostileAccepted();
    }
  }

  private CallbackReceiverExample() {}

  /**
   * Runs 300 events with seed 42 and prints the counts; exits 1 when an event was charged twice.
   *
   * @param args ignored
   * @throws Exception when the server or database cannot start
   */
  public static void main(String[] args) throws Exception {
    Result r = run(300, 42);
    PrintStream out = System.out;
    SenderReport s = r.report();
    out.println("Callback receiver example: " + r.events() + " payment events from a hostile sender"
        + " to a receiver on 127.0.0.1 with H2");
    out.println();
    out.printf("%-34s %6s  %s%n", "delivery", "sent", "receiver's final answers");
    for (Kind k : Kind.values()) {
      out.printf("%-34s %6d  %s%n", describe(k), s.count(k), answers(s, k));
    }
    out.printf("%-34s %6d  (retries included)%n", "HTTP requests", s.requests());
    out.println();
    out.printf("handler runs: %d, of which %d failed after inserting the charge (rolled back, 500, redelivered)%n",
        r.handlerRuns(), r.ledgerFailures());
    out.printf("charges: %d rows for %d events; duplicate charges: %d; events never acknowledged: %d%n",
        r.charges(), r.chargedEvents(), r.duplicateCharges(), s.unacknowledgedEvents().size());
    out.println(r.chargedOnce() ? "OK: every event charged exactly once; forgeries and replays rejected"
        : "FAILED: see the counts above");
    if (!r.chargedOnce()) System.exit(1);
  }

  private static String describe(Kind k) {
    return switch (k) {
      case ORIGINAL -> "original (old secret)";
      case DUPLICATE -> "duplicate of an event";
      case ROTATED_SECRET -> "original signed with the new secret";
      case STALE_REPLAY -> "replay, valid signature, 1 h old";
      case FORGED -> "forged (body altered)";
    };
  }

  private static String answers(SenderReport s, Kind k) {
    Map<Integer, Long> m = new java.util.TreeMap<>();
    s.deliveries().stream().filter(d -> d.kind() == k).forEach(d -> m.merge(d.finalStatus(), 1L, Long::sum));
    return m.toString();
  }

  /**
   * Runs the example.
   *
   * @param events how many distinct payment events to send
   * @param seed the sender's seed
   * @return the counts
   * @throws Exception when the server or database cannot start
   */
  public static Result run(int events, long seed) throws Exception {
    // Headers and body in separate writes would otherwise wait for the client's delayed ACK (40 ms).
    System.setProperty("sun.net.httpserver.nodelay", "true");
    String db = "jdbc:h2:mem:callbacks-example-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
    JdbcConnectionPool pool = JdbcConnectionPool.create(db, "sa", "");
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    ExecutorService executor = Executors.newFixedThreadPool(4);
    try {
      JdbcProcessingStore store = JdbcProcessingStore.builder().dataSource(pool).build();
      store.createSchema();
      try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE charges (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
            + " event_id VARCHAR(200) NOT NULL, amount INTEGER NOT NULL)");
      }
      CallbackReceiver receiver = CallbackReceiver.builder()
          .verifier(CallbackVerifier.builder()
              .scheme(StandardWebhooksScheme.of(NEW_SECRET, OLD_SECRET)).build())
          .store(store)
          .scope("payments-provider")
          .build();

      Set<String> failedOnce = ConcurrentHashMap.newKeySet();
      AtomicInteger ledgerFailures = new AtomicInteger();
      AtomicInteger handlerRuns = new AtomicInteger();
      server.createContext("/webhooks", exchange -> {
        // The receiver reads at most its maxBodyBytes (1 MiB) + 1 bytes, before verifying: a
        // larger body is answered 413 without being read in full.
        CallbackResponse response;
        try (InputStream in = exchange.getRequestBody()) {
          response = receiver.receiveInTransaction(exchange.getRequestHeaders(), in,
            (callback, tx) -> {
              handlerRuns.incrementAndGet();
              String eventId = callback.eventId().orElseThrow();
              Matcher m = AMOUNT.matcher(callback.bodyUtf8()); // a JSON library in real code
              int amount = m.find() ? Integer.parseInt(m.group(1)) : 0;
              try (PreparedStatement ps = tx.prepareStatement(
                  "INSERT INTO charges (event_id, amount) VALUES (?, ?)")) {
                ps.setString(1, eventId);
                ps.setInt(2, amount);
                ps.executeUpdate();
              }
              if (eventId.endsWith("0") && failedOnce.add(eventId)) {
                ledgerFailures.incrementAndGet();
                throw new IllegalStateException("ledger timed out after the charge row was written");
              }
              return "charged " + amount;
            });
        }
        byte[] out = response.body().getBytes(StandardCharsets.UTF_8);
        response.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
        exchange.sendResponseHeaders(response.status(), out.length);
        try (OutputStream os = exchange.getResponseBody()) {
          os.write(out);
        }
      });
      server.setExecutor(executor);
      server.start();

      List<CallbackSender.Event> list = new ArrayList<>();
      for (int i = 0; i < events; i++) {
        list.add(CallbackSender.Event.of("evt_" + i,
            "{\"type\":\"payment.succeeded\",\"data\":{\"payment\":\"pay_" + i + "\",\"amount\":" + (100 + i) + "}}"));
      }
      SenderReport report = CallbackSender.builder()
          .url("http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks")
          .signer(StandardWebhooksScheme.of(OLD_SECRET)::sign)
          .rotatedSecret(StandardWebhooksScheme.of(NEW_SECRET)::sign, 0.2)
          .seed(seed)
          .duplicates(0.3)
          .reorder(10)
          .delays(0.1, Duration.ofMillis(20))
          .staleReplays(0.1, Duration.ofHours(1))
          .forgeries(0.1)
          .backoff(Duration.ofMillis(10), Duration.ofMillis(200))
          .build()
          .send(list);
      long charges = count(pool, "SELECT COUNT(*) FROM charges");
      long charged = count(pool, "SELECT COUNT(DISTINCT event_id) FROM charges");
      return new Result(events, report, charges, charged, ledgerFailures.get(), handlerRuns.get());
    } finally {
      server.stop(0);
      executor.shutdownNow();
      pool.dispose();
    }
  }

  private static long count(JdbcConnectionPool pool, String sql) throws SQLException {
    try (Connection c = pool.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}

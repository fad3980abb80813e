package io.github.resilienthttp.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilienthttp.callbacks.TestDatabases;
import io.github.resilienthttp.server.servlet.IdempotencyFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Servlet filter in Jetty 12, transactional, on a loopback port. */
class ServletFilterTest {
  private TestDatabases.PooledDataSource ds;
  private Server jetty;
  private String base;
  private String charges;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void start() throws Exception {
    ds = TestDatabases.h2();
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().dataSource(ds).build();
    store.createSchema();
    charges = TestDatabases.uniqueName("charges");
    TestDatabases.execute(ds, "CREATE TABLE " + charges + " (idem_key VARCHAR(255), body VARCHAR(200))");
    IdempotencyGuard guard = IdempotencyGuard.builder().store(store).build();

    jetty = new Server();
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    jetty.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addFilter(new FilterHolder(IdempotencyFilter.transactional(guard)), "/*",
        EnumSet.of(DispatcherType.REQUEST));
    context.addServlet(new ServletHolder(new HttpServlet() {
      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String body = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (body.contains("fail")) throw new IllegalStateException("declined");
        Connection c = (Connection) req.getAttribute(IdempotencyFilter.CONNECTION);
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + charges + " VALUES (?, ?)")) {
          ps.setString(1, req.getHeader("Idempotency-Key"));
          ps.setString(2, body);
          ps.executeUpdate();
        } catch (SQLException e) {
          throw new IOException(e);
        }
        resp.setStatus(201);
        resp.setContentType("application/json;charset=utf-8");
        resp.setHeader("Set-Cookie", "session=1");
        resp.getWriter().write("{\"id\":\"pay_1\",\"note\":\"caf\u00e9\"}");
      }
    }), "/payments");
    jetty.setHandler(context);
    jetty.start();
    base = "http://127.0.0.1:" + connector.getLocalPort();
  }

  @AfterEach
  void stop() throws Exception {
    jetty.stop();
    ds.close();
  }

  private HttpResponse<String> post(String key, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(base + "/payments"))
        .header("Idempotency-Key", key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void firstRequestCommitsWithItsRecordRetriesGetTheReplayAndAnotherBodyGets422() throws Exception {
    HttpResponse<String> first = post("\"k-1\"", "{\"amount\":5}");
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body()).isEqualTo("{\"id\":\"pay_1\",\"note\":\"caf\u00e9\"}");
    assertThat(first.headers().firstValue("Set-Cookie")).contains("session=1");
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();

    HttpResponse<String> retry = post("\"k-1\"", "{\"amount\":5}");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(retry.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
    assertThat(retry.headers().firstValue("Set-Cookie")).isEmpty();

    HttpResponse<String> mismatch = post("\"k-1\"", "{\"amount\":500}");
    assertThat(mismatch.statusCode()).isEqualTo(422);
    assertThat(mismatch.headers().firstValue("Content-Type")).contains("application/problem+json");
    assertThat(mismatch.body()).contains(IdempotencyProblems.KEY_MISMATCH);

    assertThat(post("bad key", "{}").statusCode()).isEqualTo(400);
    assertThat(TestDatabases.count(ds, "SELECT COUNT(*) FROM " + charges)).isEqualTo(1);
  }

  @Test
  void aServletThatThrowsRollsBackAndReleasesTheKey() throws Exception {
    assertThat(post("k-2", "{\"fail\":true}").statusCode()).isEqualTo(500);
    assertThat(post("k-2", "{\"fail\":true}").statusCode()).isEqualTo(500); // ran again: not recorded
    assertThat(TestDatabases.count(ds, "SELECT COUNT(*) FROM " + charges)).isZero();
  }
}

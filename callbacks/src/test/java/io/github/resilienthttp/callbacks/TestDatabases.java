package io.github.resilienthttp.callbacks;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The two databases the JDBC tests run on (this module's, and the JDBC outbox's through this
 * module's test jar): an embedded H2 (always) and a real PostgreSQL when
 * {@code RESILIENT_HTTP_PG_URL} (environment variable or system property) gives its JDBC URL, user
 * and password included. Without it the PostgreSQL tests are skipped, except under {@code CI=true},
 * where they fail: CI must never pass with the PostgreSQL suite silently skipped.
 */
public final class TestDatabases {
  public static final String PG_URL_VARIABLE = "RESILIENT_HTTP_PG_URL";
  private static final AtomicInteger NAMES = new AtomicInteger();

  private TestDatabases() {}

  public static String uniqueName(String prefix) {
    return prefix + "_" + ProcessHandle.current().pid() + "_" + NAMES.incrementAndGet();
  }

  /** A fresh in-memory H2 database, alive until the JVM exits. */
  public static PooledDataSource h2() {
    String url = "jdbc:h2:mem:" + uniqueName("cb") + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
    return new PooledDataSource(url, 8);
  }

  /** The PostgreSQL server of {@code RESILIENT_HTTP_PG_URL}; skips (or fails on CI) when absent. */
  public static PooledDataSource postgres() {
    String url = System.getProperty(PG_URL_VARIABLE, System.getenv(PG_URL_VARIABLE));
    if (url == null || url.isBlank()) {
      if ("true".equalsIgnoreCase(System.getenv("CI"))) {
        fail(PG_URL_VARIABLE + " is not set but CI=true: .ci/run must start PostgreSQL and export it");
      }
      assumeTrue(false, PG_URL_VARIABLE + " not set: PostgreSQL tests skipped (README: Receiving callbacks, and the JDBC outbox)");
    }
    return new PooledDataSource(url, 8);
  }

  public static void execute(DataSource ds, String sql) {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  public static long count(DataSource ds, String sql) {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement();
        var rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  /**
   * A fixed pool of physical connections: close() hands the connection back (rolled back, auto-commit
   * on). Enough for tests; production uses a real pool.
   */
  public static final class PooledDataSource implements DataSource, AutoCloseable {
    private final BlockingQueue<Connection> idle;
    private final Connection[] all;
    public final String url;
    /** When set, the next commit() on a connection of this pool fails as if the connection dropped. */
    final AtomicBoolean failNextCommit = new AtomicBoolean();

    public PooledDataSource(String url, int size) {
      this.url = url;
      idle = new ArrayBlockingQueue<>(size);
      all = new Connection[size];
      try {
        for (int i = 0; i < size; i++) {
          all[i] = DriverManager.getConnection(url);
          idle.add(all[i]);
        }
      } catch (SQLException e) {
        throw new IllegalStateException("cannot connect to " + url.replaceAll("password=[^&;]*", "password=***"), e);
      }
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection physical;
      try {
        physical = idle.poll(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SQLException("interrupted");
      }
      if (physical == null) throw new SQLException("pool exhausted for 30 s");
      boolean[] closed = {false};
      return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
          new Class<?>[] {Connection.class}, (proxy, method, args) -> {
            if (method.getName().equals("close")) {
              if (!closed[0]) {
                closed[0] = true;
                if (!physical.getAutoCommit()) {
                  physical.rollback();
                  physical.setAutoCommit(true);
                }
                idle.add(physical);
              }
              return null;
            }
            if (method.getName().equals("isClosed")) return closed[0];
            if (method.getName().equals("commit") && failNextCommit.compareAndSet(true, false)) {
              physical.rollback();
              throw new SQLException("connection lost during commit (injected)", "08006");
            }
            if (closed[0]) throw new SQLException("connection handed back to the pool");
            try {
              return method.invoke(physical, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          });
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public void close() {
      for (Connection c : all) {
        try {
          c.close();
        } catch (SQLException ignored) {
          // test teardown
        }
      }
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return false;
    }
  }
}

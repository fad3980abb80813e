package io.github.resilienthttp;

import java.io.IOException;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A MockWebServer on a random loopback port and a plain {@link OkHttpClient} for each test
 * ({@code @RegisterExtension}); after the test every call is cancelled, the pool emptied and the
 * server closed. Test code only.
 */
public final class LoopbackServer implements BeforeEachCallback, AfterEachCallback {
  private MockWebServer server;
  private OkHttpClient okHttp;

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    server = new MockWebServer();
    server.start();
    okHttp = new OkHttpClient();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    okHttp.dispatcher().cancelAll();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  /** {@return this test's server} */
  public MockWebServer server() {
    return server;
  }

  /** {@return the OkHttp client to wrap} */
  public OkHttpClient okHttp() {
    return okHttp;
  }
}

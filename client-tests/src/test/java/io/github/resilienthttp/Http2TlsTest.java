package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilienthttp.testkit.FakeTimeSource;
import java.io.IOException;
import java.io.InputStream;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 negotiated with ALPN over TLS (as in production), on loopback: a refused stream is not
 * sent, a failing network interceptor is not sent, and a request reset after it was read stays
 * outcome unknown. The server's certificate is a self-signed loopback one, made with {@code keytool}
 * ({@code src/test/resources/loopback-tls.p12}, valid for 100 years, SAN {@code localhost} and
 * {@code 127.0.0.1}).
 */
class Http2TlsTest {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final char[] PASSWORD = "loopback".toCharArray();

  private MockWebServer server;
  private OkHttpClient okHttp;
  private final AtomicInteger signingFailures = new AtomicInteger();

  @BeforeEach
  void setUp() throws Exception {
    KeyStore identity = KeyStore.getInstance("PKCS12");
    try (InputStream in = Http2TlsTest.class.getResourceAsStream("/loopback-tls.p12")) {
      identity.load(in, PASSWORD);
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(identity, PASSWORD);
    SSLContext serverContext = SSLContext.getInstance("TLS");
    serverContext.init(kmf.getKeyManagers(), null, null);

    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    Certificate certificate = identity.getCertificate("loopback");
    trust.setCertificateEntry("loopback", certificate);
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    X509TrustManager trustManager = (X509TrustManager) tmf.getTrustManagers()[0];
    SSLContext clientContext = SSLContext.getInstance("TLS");
    clientContext.init(null, new javax.net.ssl.TrustManager[] {trustManager}, null);

    server = new MockWebServer();
    server.useHttps(serverContext.getSocketFactory());
    server.setProtocols(List.of(Protocol.HTTP_2, Protocol.HTTP_1_1));
    server.start();
    okHttp = new OkHttpClient.Builder()
        .sslSocketFactory(clientContext.getSocketFactory(), trustManager)
        .protocols(List.of(Protocol.HTTP_2, Protocol.HTTP_1_1))
        .addNetworkInterceptor(chain -> {
          if (signingFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IOException("signing failed");
          }
          return chain.proceed(chain.request());
        })
        .build();
  }

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.close();
  }

  private Operation keylessPost() {
    return ResilientHttpClient.wrap(okHttp).timeSource(new FakeTimeSource())
        .random(new SplittableRandom(1))
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build())
        .build()
        .operation(new Request.Builder().url(server.url("/payments"))
            .post(RequestBody.create("{\"amount\":100}", JSON)).build())
        .sendIdempotencyKey(false);
  }

  @Test
  void refusedStreamOverAlpnH2IsRetriedForAKeylessPost() throws Exception {
    // Refused once the server has read the request: refused at its start, a DATA frame still
    // arriving can draw OkHttp's server-side PROTOCOL_ERROR first (see Http2Test#refused).
    server.enqueue(new MockResponse.Builder()
        .onResponseStart(new SocketEffect.CloseStream(0x7)).build());
    server.enqueue(new MockResponse.Builder().code(201).body("created").build());
    // Real time here, with a 200 ms backoff: MockWebServer takes a stream's socket effect from the
    // queue's head before it dequeues that answer, so an instant retry on a second stream (the fake
    // clock's) could meet the refusal again on a loaded machine (seen once).
    Operation op = ResilientHttpClient.wrap(okHttp)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(200))).build())
        .build()
        .operation(new Request.Builder().url(server.url("/payments"))
            .post(RequestBody.create("{\"amount\":100}", JSON)).build())
        .sendIdempotencyKey(false);
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(r.protocol()).isEqualTo(Protocol.HTTP_2);
      assertThat(r.handshake()).isNotNull();
    }
    assertThat(op.attempts()).isEqualTo(2);
  }

  @Test
  void failingSigningOverTlsIsNotSent() throws Exception {
    signingFailures.set(1);
    server.enqueue(new MockResponse.Builder().code(201).body("created").build());
    Operation op = keylessPost();
    try (Response r = op.execute()) {
      assertThat(r.code()).isEqualTo(201);
      assertThat(r.protocol()).isEqualTo(Protocol.HTTP_2);
    }
    assertThat(op.attempts()).isEqualTo(2);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  @Test
  void resetAfterTheRequestWasReadOverTlsStaysOutcomeUnknown() {
    server.enqueue(new MockResponse.Builder()
        .onResponseStart(new SocketEffect.CloseStream(0x2)).build());
    Operation op = keylessPost();
    assertThatThrownBy(op::execute).isInstanceOf(OutcomeUnknownException.class);
    assertThat(op.attempts()).isEqualTo(1);
  }
}

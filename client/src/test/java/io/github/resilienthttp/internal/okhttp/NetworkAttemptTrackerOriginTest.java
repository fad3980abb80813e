package io.github.resilienthttp.internal.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.util.Set;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link NetworkAttemptTracker} applies {@link OriginGuard}'s rule itself, so a client whose only
 * SDK network interceptor is the tracker (one interceptor chain fewer per network request) keeps
 * the rule: a follow-up's redirect to another origin is refused before anything reaches it, or,
 * when other origins are allowed, arrives there without the carried headers. Two real servers (two
 * ports: two origins); the client has the tracker and no {@code OriginGuard}.
 */
class NetworkAttemptTrackerOriginTest {
  private final MockWebServer home = new MockWebServer();
  private final MockWebServer elsewhere = new MockWebServer();
  private OkHttpClient client;

  @BeforeEach
  void setUp() throws IOException {
    home.start();
    elsewhere.start();
    client = new OkHttpClient.Builder().addNetworkInterceptor(new NetworkAttemptTracker()).build();
  }

  @AfterEach
  void tearDown() {
    home.close();
    elsewhere.close();
    client.connectionPool().evictAll();
  }

  private Request followUp(boolean allowOtherOrigins) {
    return new Request.Builder().url(home.url("/status"))
        .header("X-Carried", "from-the-submit")
        .tag(OriginGuard.FollowUp.class,
            new OriginGuard.FollowUp(home.url("/"), allowOtherOrigins, Set.of("X-Carried")))
        .build();
  }

  private void homeRedirectsElsewhere() {
    home.enqueue(new MockResponse.Builder().code(302)
        .addHeader("Location", elsewhere.url("/status").toString()).build());
    elsewhere.enqueue(new MockResponse.Builder().code(200).body("ok").build());
  }

  @Test
  void aHopToAnotherOriginIsRefusedBeforeItIsSent() throws Exception {
    homeRedirectsElsewhere();

    Throwable failure = catchThrowable(() -> client.newCall(followUp(false)).execute().close());

    assertThat(failure).isInstanceOf(OriginGuard.OtherOriginException.class);
    assertThat(OriginGuard.refused(failure)).isTrue();
    assertThat(home.getRequestCount()).isEqualTo(1);
    assertThat(elsewhere.getRequestCount()).isZero();
  }

  @Test
  void anAllowedHopElsewhereGoesWithoutTheCarriedHeaders() throws Exception {
    homeRedirectsElsewhere();

    try (Response response = client.newCall(followUp(true)).execute()) {
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.body().string()).isEqualTo("ok");
    }

    RecordedRequest atHome = home.takeRequest();
    RecordedRequest there = elsewhere.takeRequest();
    assertThat(atHome.getHeaders().get("X-Carried")).isEqualTo("from-the-submit");
    assertThat(there.getHeaders().get("X-Carried")).isNull();
  }

  @Test
  void aCallWithoutAFollowUpTagPassesUntouched() throws Exception {
    homeRedirectsElsewhere();
    Request own = new Request.Builder().url(home.url("/status"))
        .header("X-Carried", "the-caller's").build();

    try (Response response = client.newCall(own).execute()) {
      assertThat(response.code()).isEqualTo(200);
    }

    assertThat(elsewhere.takeRequest().getHeaders().get("X-Carried")).isEqualTo("the-caller's");
  }
}

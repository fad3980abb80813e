package io.github.resilienthttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One origin rule for every call the SDK makes on the caller's behalf: the origin is the submit's
 * original URL, and no hop of a poll, the result fetch or the cancel goes elsewhere (the other
 * server sees nothing, although the wrapped client's interceptors add {@code Authorization} and
 * {@code X-Api-Key} to every call); with other origins allowed, the submit's carried headers still
 * stay home. Two real servers, two origins; blocking and async.
 */
class FollowUpOriginTest {
  private static final MediaType JSON = MediaType.get("application/json");

  private final MockWebServer home = new MockWebServer();
  private final MockWebServer elsewhere = new MockWebServer();
  private final Map<String, Function<RecordedRequest, MockResponse>> homeRoutes =
      new ConcurrentHashMap<>();
  private final List<RecordedRequest> homeSeen = new CopyOnWriteArrayList<>();
  private final List<RecordedRequest> elsewhereSeen = new CopyOnWriteArrayList<>();
  private OkHttpClient okHttp;
  private ResilientHttpClient client;
  private final AsyncOperationPolicy policy = AsyncOperationPolicy.builder()
      .minPollInterval(Duration.ofMillis(1)).jitter(0).deadline(Duration.ofSeconds(10)).build();

  @BeforeEach
  void setUp() throws IOException {
    home.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest r) {
        homeSeen.add(r);
        Function<RecordedRequest, MockResponse> route =
            homeRoutes.get(r.getMethod() + " " + r.getUrl().encodedPath());
        return route != null ? route.apply(r) : new MockResponse.Builder().code(404).build();
      }
    });
    elsewhere.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest r) {
        elsewhereSeen.add(r);
        if (r.getMethod().equals("POST")) { // a submit redirected here is accepted here
          return new MockResponse.Builder().code(202).addHeader("Operation-Location", "/status")
              .build();
        }
        return new MockResponse.Builder().code(200).body("{\"status\":\"succeeded\"}").build();
      }
    });
    home.start();
    elsewhere.start();
    // Credentials the way applications add them: per call, by interceptors.
    okHttp = new OkHttpClient.Builder()
        .addInterceptor(chain -> chain.proceed(chain.request().newBuilder()
            .header("Authorization", "Bearer app-secret").build()))
        .addNetworkInterceptor(chain -> chain.proceed(chain.request().newBuilder()
            .header("X-Api-Key", "key-secret").build()))
        .build();
    client = ResilientHttpClient.wrap(okHttp).build();
    homeRoutes.put("POST /jobs", r -> new MockResponse.Builder().code(202)
        .addHeader("Operation-Location", "/status").addHeader("Location", "/result")
        .addHeader("Link", "</cancel>; rel=\"cancel\"").build());
    homeRoutes.put("GET /result", r -> new MockResponse.Builder().code(200).body("result").build());
    homeRoutes.put("DELETE /cancel", r -> new MockResponse.Builder().code(204).build());
  }

  @AfterEach
  void tearDown() {
    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    home.close();
    elsewhere.close();
  }

  private Request submit() {
    return new Request.Builder().url(home.url("/jobs")).post(RequestBody.create("{}", JSON))
        .build();
  }

  private MockResponse redirect(int code) {
    return new MockResponse.Builder().code(code)
        .addHeader("Location", elsewhere.url("/steal").toString()).build();
  }

  private static MockResponse succeeded() {
    return new MockResponse.Builder().code(200).body("{\"status\":\"succeeded\"}").build();
  }

  private static MockResponse failed() {
    return new MockResponse.Builder().code(200).body("{\"status\":\"failed\"}").build();
  }

  private Throwable awaitBlocking(AsyncOperationPolicy p) {
    return catchThrowable(() -> client.operation(submit()).awaitCompletion(p).close());
  }

  private Throwable awaitAsync(AsyncOperationPolicy p) throws Exception {
    try {
      client.operation(submit()).awaitCompletionAsync(p).get(10, TimeUnit.SECONDS).close();
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }

  private static void assertOtherOrigin(Throwable thrown) {
    assertThat(thrown).isInstanceOf(OperationFailure.class);
    assertThat(((OperationFailure) thrown).reason()).isEqualTo("other-origin");
  }

  @ParameterizedTest
  @ValueSource(ints = {301, 302, 303, 307, 308})
  void aPollRedirectedToAnotherOriginIsRefusedAndTheOtherServerSeesNothing(int code)
      throws Exception {
    homeRoutes.put("GET /status", r -> redirect(code));
    assertOtherOrigin(awaitBlocking(policy));
    assertOtherOrigin(awaitAsync(policy));
    assertThat(elsewhereSeen).isEmpty();
    assertThat(homeSeen).extracting(RecordedRequest::getMethod)
        .containsExactly("POST", "GET", "POST", "GET"); // refused at once: not retried
  }

  @ParameterizedTest
  @ValueSource(ints = {301, 302, 303, 307, 308})
  void aResultFetchRedirectedToAnotherOriginIsRefused(int code) throws Exception {
    homeRoutes.put("GET /status", r -> succeeded());
    homeRoutes.put("GET /result", r -> redirect(code));
    assertOtherOrigin(awaitBlocking(policy));
    assertOtherOrigin(awaitAsync(policy));
    assertThat(elsewhereSeen).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(ints = {301, 302, 303, 307, 308})
  void aCancelRedirectedToAnotherOriginIsRefused(int code) throws Exception {
    homeRoutes.put("GET /status", r -> failed());
    homeRoutes.put("DELETE /cancel", r -> redirect(code));
    Throwable waited = awaitBlocking(policy);
    ResumeToken token = ((ResumableFailure) waited).resumeToken();
    assertThat(token.cancelUrl()).contains(home.url("/cancel"));
    assertOtherOrigin(catchThrowable(() -> client.cancelOnServer(token).close()));
    assertThat(elsewhereSeen).isEmpty();
  }

  @Test
  void aSubmitRedirectedElsewhereDoesNotMoveTheOriginOfItsPolls() throws Exception {
    // The submit's own call follows its 307 (the caller's request, the caller's choice); the 202
    // comes from the other origin, whose status resource is not polled with home's credentials.
    homeRoutes.put("POST /jobs", r -> new MockResponse.Builder().code(307)
        .addHeader("Location", elsewhere.url("/jobs").toString()).build());
    assertOtherOrigin(awaitBlocking(policy));
    assertOtherOrigin(awaitAsync(policy));
    assertThat(elsewhereSeen).extracting(RecordedRequest::getMethod)
        .containsExactly("POST", "POST");
  }

  @ParameterizedTest
  @ValueSource(ints = {302, 303})
  void aSameOriginStatusUrlAnsweringWithARedirectElsewhereIsRefused(int code) throws Exception {
    homeRoutes.put("GET /status", r -> new MockResponse.Builder().code(code)
        .addHeader("Location", elsewhere.url("/status").toString()).build());
    assertOtherOrigin(awaitBlocking(policy));
    assertOtherOrigin(awaitAsync(policy));
    assertThat(elsewhereSeen).isEmpty();
  }

  @Test
  void byDefaultTheSubmitsAuthorizationGoesToPollsResultAndNowhereElse() throws Exception {
    client = ResilientHttpClient.wrap(new OkHttpClient.Builder().build()).build();
    homeRoutes.put("GET /status", r -> succeeded());
    Request submit = submit().newBuilder().header("Authorization", "Bearer tenant-7")
        .header("X-Tenant", "7").build();
    try (Response r = client.operation(submit).awaitCompletion(policy)) {
      assertThat(r.body().string()).isEqualTo("result");
    }
    try (Response r = client.operation(submit).awaitCompletionAsync(policy)
        .get(10, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(homeSeen).hasSize(6).allSatisfy(
        r -> assertThat(r.getHeaders().get("Authorization")).isEqualTo("Bearer tenant-7"));
    assertThat(homeSeen).filteredOn(r -> r.getMethod().equals("GET"))
        .allSatisfy(r -> assertThat(r.getHeaders().get("X-Tenant")).isNull());
  }

  @Test
  void thePolicyNamesMoreHeadersToCarryOrNone() throws Exception {
    client = ResilientHttpClient.wrap(new OkHttpClient.Builder().build()).build();
    homeRoutes.put("GET /status", r -> succeeded());
    Request submit = submit().newBuilder().header("Authorization", "Bearer tenant-7")
        .header("X-Tenant", "7").build();
    client.operation(submit).awaitCompletion(policy.toBuilder()
        .carryHeaders(List.of("Authorization", "x-tenant")).build()).close();
    assertThat(homeSeen).filteredOn(r -> r.getMethod().equals("GET")).hasSize(2)
        .allSatisfy(r -> assertThat(r.getHeaders().get("X-Tenant")).isEqualTo("7"));
    homeSeen.clear();
    client.operation(submit).awaitCompletion(policy.toBuilder().carryHeaders(Set.of()).build())
        .close();
    assertThat(homeSeen).filteredOn(r -> r.getMethod().equals("GET")).hasSize(2)
        .allSatisfy(r -> assertThat(r.getHeaders().get("Authorization")).isNull());
  }

  @ParameterizedTest
  @ValueSource(ints = {302, 307})
  void withOtherOriginsAllowedTheCarriedHeadersStillStayHome(int code) throws Exception {
    client = ResilientHttpClient.wrap(new OkHttpClient.Builder().build()).build();
    homeRoutes.put("GET /status", r -> new MockResponse.Builder().code(code)
        .addHeader("Location", elsewhere.url("/status").toString()).build());
    Request submit = submit().newBuilder().header("Authorization", "Bearer tenant-7")
        .header("X-Tenant", "7").build();
    AsyncOperationPolicy allow = policy.toBuilder().allowOtherOrigins(true)
        .carryHeaders(List.of("Authorization", "X-Tenant"))
        .followUpHeaders(Headers.of("X-Extra", "e")).build();
    try (Response r = client.operation(submit).awaitCompletion(allow)) {
      assertThat(r.code()).isEqualTo(200); // the other origin's answer, as allowed
    }
    try (Response r = client.operation(submit).awaitCompletionAsync(allow)
        .get(10, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(homeSeen).filteredOn(r -> r.getMethod().equals("GET")).hasSize(4) // status, result
        .allSatisfy(r -> assertThat(r.getHeaders().get("X-Tenant")).isEqualTo("7"));
    assertThat(elsewhereSeen).hasSize(2).allSatisfy(r -> {
      assertThat(r.getHeaders().get("Authorization")).isNull();
      assertThat(r.getHeaders().get("X-Tenant")).isNull();
      assertThat(r.getHeaders().get("X-Extra")).isNull();
    });
  }

  @Test
  void cancelOnServerCarriesTheSubmitsAuthorizationWhenGivenTheSubmit() throws Exception {
    client = ResilientHttpClient.wrap(new OkHttpClient.Builder().build()).build();
    homeRoutes.put("GET /status", r -> failed());
    Request submit = submit().newBuilder().header("Authorization", "Bearer tenant-7").build();
    ResumeToken token = ((ResumableFailure) catchThrowable(
        () -> client.operation(submit).awaitCompletion(policy).close())).resumeToken();
    client.cancelOnServer(token, submit, policy).close();
    client.cancelOnServer(token, policy).close(); // without the submit: nothing to carry
    assertThat(homeSeen).filteredOn(r -> r.getMethod().equals("DELETE"))
        .extracting(r -> r.getHeaders().get("Authorization"))
        .containsExactly("Bearer tenant-7", null);
    Request other = submit.newBuilder().url(home.url("/other")).build();
    assertThat(catchThrowable(() -> client.cancelOnServer(token, other, policy)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aResumedWaitGetsCredentialsFromThePolicysFollowUpHeaders() throws Exception {
    client = ResilientHttpClient.wrap(new OkHttpClient.Builder().build()).build();
    homeRoutes.put("GET /status", r -> failed());
    Throwable waited = awaitBlocking(policy);
    ResumeToken token = ((ResumableFailure) waited).resumeToken();
    homeRoutes.put("GET /status", r -> succeeded());
    homeSeen.clear();
    AsyncOperationPolicy resumed = policy.toBuilder()
        .followUpHeaders(Headers.of("Authorization", "Bearer tenant-9")).build();
    try (Response r = client.resume(token, resumed)) {
      assertThat(r.body().string()).isEqualTo("result");
    }
    try (Response r = client.resumeAsync(token, resumed).get(10, TimeUnit.SECONDS)) {
      assertThat(r.code()).isEqualTo(200);
    }
    client.cancelOnServer(token, resumed).close();
    assertThat(homeSeen).extracting(RecordedRequest::getMethod)
        .containsExactly("GET", "GET", "GET", "GET", "DELETE");
    assertThat(homeSeen).allSatisfy(
        r -> assertThat(r.getHeaders().get("Authorization")).isEqualTo("Bearer tenant-9"));
  }
}

package demo;

import com.sun.net.httpserver.HttpServer;
import io.github.resilienthttp.ResilientHttpClient;
import io.github.resilienthttp.json.HttpStatusException;
import io.github.resilienthttp.json.JsonCodec;
import io.github.resilienthttp.json.ProblemDetails;
import io.github.resilienthttp.micrometer.MicrometerOperationMetrics;
import io.github.resilienthttp.opentelemetry.ResilientHttpTracing;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttp;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.ResponseBody;
import retrofit2.Retrofit;
import retrofit2.http.GET;

/** Core, JSON, Micrometer, OpenTelemetry and Retrofit together, against a loopback server. */
public final class FreshProject {
  public record CreatePayment(long amount, String currency) {}

  public record Payment(String id, long amount, String currency) {}

  interface Items {
    @GET("/items")
    retrofit2.Call<ResponseBody> list();
  }

  public static void main(String[] args) {
    try {
      run();
    } catch (Throwable t) {
      // The server's and OkHttp's non-daemon threads would keep a failed run alive.
      t.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }

  private static void run() throws Exception {
    AtomicInteger paymentRequests = new AtomicInteger();
    List<String> traceparents = new CopyOnWriteArrayList<>();
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/payments", exchange -> {
      traceparents.add(exchange.getRequestHeaders().getFirst("traceparent"));
      exchange.getRequestBody().readAllBytes();
      if (paymentRequests.incrementAndGet() == 1) {
        send(exchange, 503, "text/plain", "busy");
      } else {
        send(exchange, 201, "application/json", "{\"id\":\"p-1\",\"amount\":100,\"currency\":\"EUR\"}");
      }
    });
    server.createContext("/missing", exchange -> send(exchange, 404, "application/problem+json",
        "{\"type\":\"https://example.com/problems/not-found\",\"title\":\"Not found\",\"status\":404}"));
    server.createContext("/items", exchange -> send(exchange, 200, "application/json", "[1,2,3]"));
    server.start();
    String base = "http://127.0.0.1:" + server.getAddress().getPort();

    List<SpanData> spans = new CopyOnWriteArrayList<>();
    SdkTracerProvider tracerProvider = SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(new SpanExporter() {
          @Override public CompletableResultCode export(Collection<SpanData> batch) {
            spans.addAll(batch);
            return CompletableResultCode.ofSuccess();
          }
          @Override public CompletableResultCode flush() { return CompletableResultCode.ofSuccess(); }
          @Override public CompletableResultCode shutdown() { return CompletableResultCode.ofSuccess(); }
        }))
        .build();
    OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider)
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    ResilientHttpTracing tracing = ResilientHttpTracing.create(otel);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();

    OkHttpClient okHttp = new OkHttpClient.Builder().addInterceptor(tracing.interceptor()).build();
    MicrometerOperationMetrics metrics = new MicrometerOperationMetrics(registry);
    ResilientHttpClient client = ResilientHttpClient.wrap(okHttp)
        .addListener(metrics)
        .addListener(tracing.listener())
        .build();
    metrics.bindTo(client);
    JsonCodec json = JsonCodec.create();

    Request create = new Request.Builder().url(base + "/payments")
        .post(json.body(new CreatePayment(100, "EUR"))).build();
    Payment payment = json.execute(client.operation(create), Payment.class);
    check(payment.equals(new Payment("p-1", 100, "EUR")), "payment " + payment);
    check(paymentRequests.get() == 2, "two attempts, got " + paymentRequests.get());

    try {
      json.execute(client.operation(new Request.Builder().url(base + "/missing").build()), Payment.class);
      check(false, "404 should throw");
    } catch (HttpStatusException e) {
      check(e.statusCode() == 404, "status " + e.statusCode());
      check(e.problem().map(ProblemDetails::type).orElse("").endsWith("/not-found"), "problem type");
    }

    Items items = new Retrofit.Builder().baseUrl(base + "/").client(client.okHttpClient()).build()
        .create(Items.class);
    try (ResponseBody body = items.list().execute().body()) {
      check(body.string().equals("[1,2,3]"), "retrofit body");
    }

    List<SpanData> attempts = spans.stream().filter(s -> s.getKind() == SpanKind.CLIENT).toList();
    check(attempts.size() == 4, "client spans " + attempts.size());
    check(attempts.stream().anyMatch(s ->
        Long.valueOf(1).equals(s.getAttributes().get(AttributeKey.longKey("http.request.resend_count")))),
        "a resend count of 1");
    check(traceparents.size() == 2 && traceparents.stream().allMatch(t -> t != null && t.startsWith("00-")),
        "traceparent on every attempt: " + traceparents);
    double operations = registry.find("http.client.operations").counters().stream()
        .mapToDouble(c -> c.count()).sum();
    check(operations == 3, "operations counted: " + operations);

    okHttp.dispatcher().executorService().shutdown();
    okHttp.connectionPool().evictAll();
    server.stop(0);
    tracerProvider.close();
    for (Class<?> c : new Class<?>[] {OkHttpClient.class,
        io.github.resilience4j.circuitbreaker.CircuitBreaker.class,
        com.fasterxml.jackson.databind.ObjectMapper.class,
        io.micrometer.core.instrument.MeterRegistry.class,
        io.opentelemetry.api.OpenTelemetry.class, OpenTelemetrySdk.class}) {
      String jar = c.getProtectionDomain().getCodeSource().getLocation().getPath();
      System.out.println("JAR " + jar.substring(jar.lastIndexOf('/') + 1));
    }
    System.out.println("FRESH PROJECT OK okhttp=" + OkHttp.VERSION + " spans=" + spans.size()
        + " meters=" + registry.getMeters().size() + " operations=" + operations);
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }

  private static void send(com.sun.net.httpserver.HttpExchange exchange, int status, String type,
      String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }
}

package io.github.resilienthttp.examples.springboot;

import io.github.resilienthttp.callbacks.StandardWebhooksScheme;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.stereotype.Component;

/**
 * {@code --payments.demo=true}: once started, pays through the stand-in acquirer (whose first answer
 * is lost: the SDK retries with the same key), then plays the acquirer's webhook for that charge
 * twice and a forged one, prints what each got, and stops the application.
 */
@Component
@ConditionalOnProperty(name = "payments.demo", havingValue = "true")
class DemoTour implements ApplicationRunner {
  private static final Pattern FIELD = Pattern.compile("\"chargeId\"\\s*:\\s*\"([^\"]+)\"");
  private final WebServerApplicationContext context;
  private final List<String> secrets;
  private final String webhookPath;
  private final HttpClient http = HttpClient.newHttpClient();

  DemoTour(WebServerApplicationContext context,
      @Value("${resilient-http.callbacks.secrets}") List<String> secrets,
      @Value("${resilient-http.callbacks.path}") String webhookPath) {
    this.context = context;
    this.secrets = secrets;
    this.webhookPath = webhookPath;
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + context.getWebServer().getPort() + path);
  }

  private HttpResponse<String> post(String path, String body, java.util.Map<String, String> headers)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Override
  public void run(ApplicationArguments args) throws Exception {
    HttpResponse<String> payment = post("/payments", "{\"amount\":4200,\"currency\":\"EUR\"}", java.util.Map.of());
    System.out.println("POST /payments -> " + payment.statusCode() + " " + payment.body());
    Matcher m = FIELD.matcher(payment.body());
    String chargeId = m.find() ? m.group(1) : "none";

    String event = "{\"type\":\"charge.settled\",\"charge\":\"" + chargeId + "\"}";
    StandardWebhooksScheme signer = StandardWebhooksScheme.of(secrets.get(0));
    for (int i = 1; i <= 2; i++) {
      var headers = signer.sign("evt_settled_" + chargeId, Instant.now(), event.getBytes(StandardCharsets.UTF_8));
      HttpResponse<String> r = post(webhookPath, event, headers);
      System.out.println("webhook delivery " + i + " -> " + r.statusCode() + " " + r.body());
    }
    var forged = StandardWebhooksScheme.of("whsec_" + java.util.Base64.getEncoder().encodeToString(
        "not-the-acquirers-secret-at-all!".getBytes(StandardCharsets.UTF_8)))
        .sign("evt_forged", Instant.now(), event.getBytes(StandardCharsets.UTF_8));
    HttpResponse<String> f = post(webhookPath, event, forged);
    System.out.println("forged webhook -> " + f.statusCode() + " " + f.body());
    HttpResponse<String> shown = http.send(HttpRequest.newBuilder(uri("/payments/"
        + payment.body().replaceAll(".*\"id\"\\s*:\\s*\"([^\"]+)\".*", "$1"))).build(),
        HttpResponse.BodyHandlers.ofString());
    System.out.println("GET /payments/{id} -> " + shown.body());
    ((ConfigurableApplicationContext) context).close();
  }
}

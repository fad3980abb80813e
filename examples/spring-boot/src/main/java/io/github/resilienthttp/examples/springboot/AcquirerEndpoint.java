package io.github.resilienthttp.examples.springboot;

import io.github.resilienthttp.testkit.Fault;
import io.github.resilienthttp.testkit.IdempotentTestServer;
import java.io.IOException;
import okhttp3.HttpUrl;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Where the acquirer is: {@code payments.acquirer-url}, or, when that is empty (the demo), a
 * stand-in on a random loopback port: the SDK's testkit server, an idempotent payments API whose
 * first charge is processed and then its answer lost on the wire, so that the demo shows a retry
 * with the same key and one charge.
 */
@Component
class AcquirerEndpoint implements DisposableBean {
  private final HttpUrl url;
  private final IdempotentTestServer standIn;

  AcquirerEndpoint(@Value("${payments.acquirer-url:}") String acquirerUrl) throws IOException {
    if (acquirerUrl.isBlank()) {
      standIn = IdempotentTestServer.builder().build().start();
      standIn.script(Fault.processThenDrop());
      url = standIn.url("/");
    } else {
      standIn = null;
      url = HttpUrl.get(acquirerUrl);
    }
  }

  HttpUrl url() {
    return url;
  }

  @Override
  public void destroy() {
    if (standIn != null) standIn.close();
  }
}

package io.github.resilienthttp.examples.springboot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A payments service: {@code POST /payments} charges the acquirer through the {@code acquirer}
 * client (one idempotency key per payment, so a retried charge never charges twice), and
 * {@code POST /webhooks/acquirer} receives the acquirer's signed events, each settling its payment
 * once, in the transaction that records the event as processed.
 */
@SpringBootApplication
public class PaymentsApplication {
  public static void main(String[] args) {
    SpringApplication.run(PaymentsApplication.class, args);
  }
}

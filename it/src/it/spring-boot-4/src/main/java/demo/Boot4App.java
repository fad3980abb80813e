package demo;

import io.github.resilienthttp.callbacks.CallbackHandler;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

@SpringBootApplication
public class Boot4App {
  public static void main(String[] args) {
    SpringApplication.run(Boot4App.class, args);
  }

  /** The webhook's business effect: a row, written in the transaction the record commits with. */
  @Bean
  CallbackHandler paymentEvents(JdbcTemplate jdbc) {
    return callback -> {
      jdbc.update("INSERT INTO payment_events (event_id, body) VALUES (?, ?)",
          callback.eventId().orElseThrow(), callback.bodyUtf8());
      return "recorded";
    };
  }
}

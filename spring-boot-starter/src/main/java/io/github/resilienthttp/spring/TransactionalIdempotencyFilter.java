package io.github.resilienthttp.spring;

import io.github.resilienthttp.server.servlet.IdempotencyFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The guard's {@link IdempotencyFilter} inside a transaction of the application's
 * {@link PlatformTransactionManager}, for requests carrying the key header: the handler's writes
 * (JdbcTemplate, JPA: anything joining Spring's transaction) and the record (through a
 * {@link SpringTransactionIdempotencyStore}) commit together before the response leaves (it is held
 * in memory until then; a failed commit sends none, and the key's lease lets a retry run), or roll back when the chain throws or the response status is 5xx (the guard does not
 * record those; the key is released for a retry). Requests without the header run without a
 * transaction. Thread-safe.
 */
public final class TransactionalIdempotencyFilter implements Filter {
  private final IdempotencyFilter delegate;
  private final PlatformTransactionManager transactions;
  private final String headerName;

  /**
   * Wraps a filter.
   *
   * @param delegate the guard's filter ({@link IdempotencyFilter#of}); its guard's store a
   *     {@link SpringTransactionIdempotencyStore} on the transaction manager's data source
   * @param transactions the transaction manager
   * @param headerName the key header that makes a request run in a transaction
   */
  public TransactionalIdempotencyFilter(IdempotencyFilter delegate, PlatformTransactionManager transactions,
      String headerName) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.transactions = Objects.requireNonNull(transactions, "transactions");
    this.headerName = Objects.requireNonNull(headerName, "headerName");
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)
        || request.getHeader(headerName) == null) {
      delegate.doFilter(req, res, chain);
      return;
    }
    // The response stays in memory until the commit: a client never sees a success that rolled back.
    ContentCachingResponseWrapper held = new ContentCachingResponseWrapper(response);
    TransactionStatus tx = transactions.getTransaction(new DefaultTransactionDefinition());
    try {
      delegate.doFilter(request, held, chain);
    } catch (IOException | ServletException | RuntimeException | Error e) {
      transactions.rollback(tx);
      throw e;
    }
    if (held.getStatus() >= 500 || tx.isRollbackOnly()) {
      transactions.rollback(tx);
    } else {
      transactions.commit(tx);
    }
    held.copyBodyToResponse();
  }
}

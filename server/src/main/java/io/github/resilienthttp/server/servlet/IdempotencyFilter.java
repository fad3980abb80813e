package io.github.resilienthttp.server.servlet;

import io.github.resilienthttp.server.Admission;
import io.github.resilienthttp.server.IdempotencyGuard;
import io.github.resilienthttp.server.IdempotencyTicket;
import io.github.resilienthttp.server.IdempotentRequest;
import io.github.resilienthttp.server.IdempotentResponse;
import io.github.resilienthttp.server.JdbcIdempotencyStore;
import io.github.resilienthttp.server.LeaseLostException;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The guard as a Servlet {@link Filter} (Jakarta Servlet 6): reads the request body (up to
 * {@link #MAX_REQUEST_BODY}), lets the {@link IdempotencyGuard} answer (replay, {@code 409},
 * {@code 422}, {@code 400}) or passes the request on with the body re-readable, buffers the response,
 * records it and then sends it.
 *
 * <p>{@link #transactional(IdempotencyGuard)} opens a connection on the JDBC store's data source with
 * auto-commit off and hands it to the servlet as the request attribute {@link #CONNECTION}: business
 * writes made through it commit together with the record after the servlet returns (a recorded status),
 * or roll back (an unrecorded status, an exception). The servlet must not commit or close it.
 *
 * <p>The principal is {@link HttpServletRequest#getUserPrincipal()}'s name unless the guard's
 * {@code principal} function says otherwise. Thread-safe.
 */
public final class IdempotencyFilter implements Filter {
  /** The request attribute holding the transaction's {@link Connection} in transactional mode. */
  public static final String CONNECTION = IdempotencyFilter.class.getName() + ".connection";
  /** The largest request body read, in bytes; a larger one gets {@code 413}. */
  public static final int MAX_REQUEST_BODY = 1024 * 1024;

  private final IdempotencyGuard guard;
  private final DataSource transactionSource;

  private IdempotencyFilter(IdempotencyGuard guard, DataSource transactionSource) {
    this.guard = Objects.requireNonNull(guard, "guard");
    this.transactionSource = transactionSource;
  }

  /**
   * A filter that records responses on the store's own connection.
   *
   * @param guard the guard
   * @return the filter
   */
  public static IdempotencyFilter of(IdempotencyGuard guard) {
    return new IdempotencyFilter(guard, null);
  }

  /**
   * A filter that gives the servlet a transaction ({@link #CONNECTION}) and records in it.
   *
   * @param guard the guard; its store must be a {@link JdbcIdempotencyStore}
   * @return the filter
   * @throws IllegalArgumentException when the store is not JDBC
   */
  public static IdempotencyFilter transactional(IdempotencyGuard guard) {
    if (!(guard.store() instanceof JdbcIdempotencyStore jdbc)) {
      throw new IllegalArgumentException("guard: a transactional filter needs a JdbcIdempotencyStore, not " + guard.store());
    }
    return new IdempotencyFilter(guard, jdbc.dataSource());
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    byte[] body;
    try (InputStream in = request.getInputStream()) {
      body = in.readNBytes(MAX_REQUEST_BODY + 1);
    }
    if (body.length > MAX_REQUEST_BODY) {
      write(response, IdempotentResponse.of(413, "text/plain", "request body over " + MAX_REQUEST_BODY + " bytes"));
      return;
    }
    CachedBodyRequest wrapped = new CachedBodyRequest(request, body);
    Admission admission = guard.admit(toRequest(request, body));
    if (admission instanceof Admission.Answer answer) {
      write(response, answer.response());
      return;
    }
    if (admission instanceof Admission.Bypass) {
      chain.doFilter(wrapped, response);
      return;
    }
    IdempotencyTicket ticket = ((Admission.Proceed) admission).ticket();
    BufferedResponse buffered = new BufferedResponse(response);
    if (transactionSource == null) {
      try {
        chain.doFilter(wrapped, buffered);
      } catch (IOException | ServletException | RuntimeException e) {
        ticket.abandon();
        throw e;
      }
      write(response, ticket.complete(buffered.toResponse()));
      return;
    }
    try (Connection c = transactionSource.getConnection()) {
      c.setAutoCommit(false);
      wrapped.setAttribute(CONNECTION, c);
      try {
        chain.doFilter(wrapped, buffered);
      } catch (IOException | ServletException | RuntimeException e) {
        c.rollback();
        ticket.abandon();
        throw e;
      }
      IdempotentResponse result = buffered.toResponse();
      if (result.status() >= 500) {
        c.rollback();
        ticket.abandon();
        write(response, result);
        return;
      }
      try {
        ticket.complete(c, result);
      } catch (LeaseLostException lost) {
        c.rollback();
        throw new ServletException("the idempotency lease was taken over; the transaction was rolled back", lost);
      }
      c.commit();
      write(response, result);
    } catch (SQLException e) {
      ticket.abandon();
      throw new ServletException("idempotent transaction failed", e);
    }
  }

  private static IdempotentRequest toRequest(HttpServletRequest request, byte[] body) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    for (String name : Collections.list(request.getHeaderNames())) {
      headers.put(name, Collections.list(request.getHeaders(name)));
    }
    String path = request.getRequestURI();
    return new IdempotentRequest(request.getMethod(), path, request.getQueryString(), headers, body,
        request.getUserPrincipal() == null ? null : request.getUserPrincipal().getName());
  }

  private static void write(HttpServletResponse response, IdempotentResponse answer) throws IOException {
    response.resetBuffer();
    response.setStatus(answer.status());
    answer.headers().forEach((name, values) -> {
      List<String> copy = new ArrayList<>(values);
      if (copy.isEmpty()) return;
      response.setHeader(name, copy.get(0));
      for (String v : copy.subList(1, copy.size())) response.addHeader(name, v);
    });
    response.setContentLength(answer.body().length);
    response.getOutputStream().write(answer.body());
    response.flushBuffer();
  }
}

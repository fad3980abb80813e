package io.github.resilienthttp.server.servlet;

import io.github.resilienthttp.server.IdempotentResponse;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Holds the servlet's response until it is recorded: status and headers are kept here, the body in
 * memory; nothing reaches the client until the filter writes it.
 */
final class BufferedResponse extends HttpServletResponseWrapper {
  private final ByteArrayOutputStream body = new ByteArrayOutputStream();
  private final Map<String, List<String>> headers = new LinkedHashMap<>();
  private int status = 200;
  private PrintWriter writer;
  private ServletOutputStream stream;

  BufferedResponse(HttpServletResponse response) {
    super(response);
  }

  IdempotentResponse toResponse() {
    if (writer != null) writer.flush();
    return new IdempotentResponse(status, headers, body.toByteArray());
  }

  @Override
  public void setStatus(int sc) {
    status = sc;
  }

  @Override
  public int getStatus() {
    return status;
  }

  @Override
  public void sendError(int sc, String msg) {
    status = sc;
    body.reset();
    if (msg != null) body.writeBytes(msg.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    setContentType("text/plain;charset=utf-8");
  }

  @Override
  public void sendError(int sc) {
    sendError(sc, null);
  }

  @Override
  public void sendRedirect(String location) {
    status = 302;
    setHeader("Location", location);
  }

  @Override
  public void setHeader(String name, String value) {
    remove(name);
    addHeader(name, value);
  }

  @Override
  public void addHeader(String name, String value) {
    if (value == null) return;
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) {
        e.getValue().add(value);
        return;
      }
    }
    headers.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
  }

  @Override
  public void setIntHeader(String name, int value) {
    setHeader(name, Integer.toString(value));
  }

  @Override
  public void addIntHeader(String name, int value) {
    addHeader(name, Integer.toString(value));
  }

  @Override
  public void setDateHeader(String name, long date) {
    setHeader(name, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
        java.time.Instant.ofEpochMilli(date).atZone(java.time.ZoneOffset.UTC)));
  }

  @Override
  public void addDateHeader(String name, long date) {
    addHeader(name, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
        java.time.Instant.ofEpochMilli(date).atZone(java.time.ZoneOffset.UTC)));
  }

  @Override
  public boolean containsHeader(String name) {
    return headers.keySet().stream().anyMatch(name::equalsIgnoreCase);
  }

  @Override
  public String getHeader(String name) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) return e.getValue().get(0);
    }
    return null;
  }

  @Override
  public java.util.Collection<String> getHeaders(String name) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) return List.copyOf(e.getValue());
    }
    return List.of();
  }

  @Override
  public java.util.Collection<String> getHeaderNames() {
    return List.copyOf(headers.keySet());
  }

  @Override
  public void setContentType(String type) {
    if (type != null) setHeader("Content-Type", type);
  }

  @Override
  public String getContentType() {
    return getHeader("Content-Type");
  }

  @Override
  public void setContentLength(int len) {
    // the filter sets the length of what it writes
  }

  @Override
  public void setContentLengthLong(long len) {
    // the filter sets the length of what it writes
  }

  private void remove(String name) {
    headers.keySet().removeIf(name::equalsIgnoreCase);
  }

  @Override
  public ServletOutputStream getOutputStream() {
    if (stream == null) {
      stream = new ServletOutputStream() {
        @Override
        public void write(int b) {
          body.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
          body.write(b, off, len);
        }

        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {
          throw new IllegalStateException("the idempotency filter buffers the response; write it blocking");
        }
      };
    }
    return stream;
  }

  @Override
  public PrintWriter getWriter() {
    if (writer == null) {
      // The charset of the Content-Type the servlet set here (the real response never saw it), else UTF-8.
      String type = getContentType();
      int at = type == null ? -1 : type.toLowerCase(java.util.Locale.ROOT).indexOf("charset=");
      Charset charset = at < 0 ? java.nio.charset.StandardCharsets.UTF_8
          : Charset.forName(type.substring(at + 8).split(";")[0].trim().replace("\"", ""));
      writer = new PrintWriter(new OutputStreamWriter(getOutputStream(), charset));
    }
    return writer;
  }

  @Override
  public String getCharacterEncoding() {
    String type = getContentType();
    int at = type == null ? -1 : type.toLowerCase(java.util.Locale.ROOT).indexOf("charset=");
    return at < 0 ? "UTF-8" : type.substring(at + 8).split(";")[0].trim().replace("\"", "");
  }

  @Override
  public void flushBuffer() {
    if (writer != null) writer.flush();
  }

  @Override
  public boolean isCommitted() {
    return false;
  }

  @Override
  public void reset() {
    body.reset();
    headers.clear();
    status = 200;
  }

  @Override
  public void resetBuffer() {
    body.reset();
  }
}

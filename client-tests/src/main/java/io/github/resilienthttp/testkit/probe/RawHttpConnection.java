package io.github.resilienthttp.testkit.probe;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import okhttp3.Headers;
import okhttp3.HttpUrl;

/**
 * One HTTP/1.1 exchange on a socket the probe controls: opened (and, for https, handshaken with
 * host name verification) before the request is written, so that a burst of requests can be
 * released at one instant, and closable after writing without reading the answer (the lost
 * response). Sends {@code Connection: close}. Not thread-safe; one per exchange. Not API.
 */
final class RawHttpConnection implements Closeable {
  private static final int MAX_BODY = 64 * 1024;
  private static final int MAX_LINE = 16 * 1024;

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  private RawHttpConnection(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new java.io.BufferedInputStream(socket.getInputStream());
    this.out = socket.getOutputStream();
  }

  /** Connects to the URL's host and port (no proxy), with {@code timeout} for connect and reads. */
  static RawHttpConnection open(HttpUrl url, Duration timeout) throws IOException {
    int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
    Socket plain = new Socket();
    try {
      plain.setTcpNoDelay(true);
      plain.connect(new InetSocketAddress(url.host(), url.port()), millis);
      plain.setSoTimeout(millis);
      if (!url.isHttps()) {
        return new RawHttpConnection(plain);
      }
      SSLSocketFactory factory = (SSLSocketFactory) SSLSocketFactory.getDefault();
      SSLSocket tls = (SSLSocket) factory.createSocket(plain, url.host(), url.port(), true);
      SSLParameters parameters = tls.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS");
      tls.setSSLParameters(parameters);
      tls.startHandshake();
      return new RawHttpConnection(tls);
    } catch (IOException | RuntimeException e) {
      plain.close();
      throw e;
    }
  }

  /** The bytes of a request to {@code url}. */
  static byte[] encode(HttpUrl url, String method, Headers headers, byte[] body) {
    StringBuilder head = new StringBuilder();
    String target = url.encodedQuery() == null
        ? url.encodedPath()
        : url.encodedPath() + "?" + url.encodedQuery();
    head.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
    boolean defaultPort = url.port() == HttpUrl.defaultPort(url.scheme());
    head.append("Host: ").append(url.host().contains(":") ? "[" + url.host() + "]" : url.host());
    if (!defaultPort) {
      head.append(':').append(url.port());
    }
    head.append("\r\n");
    for (int i = 0; i < headers.size(); i++) {
      head.append(headers.name(i)).append(": ").append(headers.value(i)).append("\r\n");
    }
    head.append("Content-Length: ").append(body.length).append("\r\n");
    head.append("Connection: close\r\n\r\n");
    byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
    byte[] all = new byte[h.length + body.length];
    System.arraycopy(h, 0, all, 0, h.length);
    System.arraycopy(body, 0, all, h.length, body.length);
    return all;
  }

  void write(byte[] request) throws IOException {
    out.write(request);
    out.flush();
  }

  /**
   * Waits until the first byte of the answer arrives (the server has processed the request and
   * started answering), within the read timeout. The byte is consumed; the answer is not read.
   *
   * @return true when a byte arrived, false on timeout or end of stream
   */
  boolean awaitAnswerStart() throws IOException {
    try {
      return in.read() >= 0;
    } catch (SocketTimeoutException e) {
      return false;
    }
  }

  /** Reads the whole answer (status line, headers, body by length, chunks or to the end). */
  ProbeExchange readResponse() throws IOException {
    String statusLine = readLine();
    String[] parts = statusLine.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/")) {
      throw new IOException("not an HTTP status line: " + statusLine);
    }
    int status;
    try {
      status = Integer.parseInt(parts[1]);
    } catch (NumberFormatException e) {
      throw new IOException("not an HTTP status line: " + statusLine);
    }
    Headers.Builder headers = new Headers.Builder();
    for (String line = readLine(); !line.isEmpty(); line = readLine()) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        String name = line.substring(0, colon).trim();
        headers.addUnsafeNonAscii(name, line.substring(colon + 1).trim());
      }
    }
    Headers h = headers.build();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    String encoding = h.get("Transfer-Encoding");
    String length = h.get("Content-Length");
    if (encoding != null && encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
      for (long size = chunkSize(); size > 0; size = chunkSize()) {
        copy(size, body);
        readLine();
      }
    } else if (length != null) {
      copy(Long.parseLong(length.trim()), body);
    } else if (status >= 200 && status != 204 && status != 304) {
      copy(Long.MAX_VALUE, body);
    }
    return new ProbeExchange(status, h, body.toString(StandardCharsets.UTF_8), null);
  }

  private long chunkSize() throws IOException {
    String line = readLine();
    int semicolon = line.indexOf(';');
    String hex = (semicolon >= 0 ? line.substring(0, semicolon) : line).trim();
    try {
      return Long.parseLong(hex, 16);
    } catch (NumberFormatException e) {
      throw new IOException("bad chunk size: " + line);
    }
  }

  /** Reads {@code n} bytes (or to the end when {@code n} is MAX_VALUE), keeping at most 64 KiB. */
  private void copy(long n, ByteArrayOutputStream sink) throws IOException {
    byte[] buffer = new byte[8192];
    long left = n;
    while (left > 0) {
      int read = in.read(buffer, 0, (int) Math.min(buffer.length, left));
      if (read < 0) {
        if (n == Long.MAX_VALUE) {
          return;
        }
        throw new EOFException("body ended after " + (n - left) + " of " + n + " bytes");
      }
      int keep = Math.min(read, MAX_BODY - sink.size());
      if (keep > 0) {
        sink.write(buffer, 0, keep);
      }
      left -= read;
    }
  }

  private String readLine() throws IOException {
    StringBuilder line = new StringBuilder();
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("connection closed by the server");
      }
      if (b == '\n') {
        int end = line.length();
        if (end > 0 && line.charAt(end - 1) == '\r') {
          line.setLength(end - 1);
        }
        return line.toString();
      }
      if (line.length() >= MAX_LINE) {
        throw new IOException("header line longer than " + MAX_LINE + " bytes");
      }
      line.append((char) b);
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

package io.github.resilienthttp.bench;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.HttpUrl;

/**
 * The smallest HTTP/1.1 server that can stand in for a healthy service in a client benchmark: it
 * answers every request with the same {@code 200} and a small JSON body, on keep-alive connections,
 * on the loopback interface. One thread per connection, one reused buffer per connection and one
 * precomputed response: it allocates nothing per request, so the JMH GC profiler (which counts the
 * allocations of every thread in the JVM) sees the client's allocations and not the server's.
 *
 * <p>It understands only what OkHttp sends in these benchmarks: a request line, headers, and a body
 * of {@code Content-Length} bytes (no chunked bodies, no pipelining beyond what is buffered). Not a
 * general server; benchmark code only.
 */
final class LoopbackHttpServer implements Closeable {
  static final String BODY = "{\"id\":\"pay_1\",\"status\":\"succeeded\"}";
  private static final byte[] RESPONSE = ("HTTP/1.1 200 OK\r\n"
      + "Content-Type: application/json\r\n"
      + "Content-Length: " + BODY.length() + "\r\n"
      + "\r\n"
      + BODY).getBytes(StandardCharsets.US_ASCII);
  private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);

  /** The precomputed answers: to a POST and to any other request. */
  private final byte[] answerToPost;
  private final byte[] answerToOthers;
  private final ServerSocket serverSocket;
  private final List<Socket> connections = new CopyOnWriteArrayList<>();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong accepted = new AtomicLong();
  private volatile boolean closed;

  private LoopbackHttpServer(ServerSocket serverSocket, byte[] answerToPost, byte[] answerToOthers) {
    this.serverSocket = serverSocket;
    this.answerToPost = answerToPost;
    this.answerToOthers = answerToOthers;
  }

  static LoopbackHttpServer start() throws IOException {
    return start(0);
  }

  /**
   * A server that answers every POST with {@code post} and every other request with {@code other}:
   * whole HTTP/1.1 responses (status line, headers, blank line, body), for example a 202 with a
   * {@code Location} and a {@code Retry-After} to the submit and a "running" status to every poll.
   */
  static LoopbackHttpServer answering(String post, String other) throws IOException {
    return start(0, post.getBytes(StandardCharsets.US_ASCII), other.getBytes(StandardCharsets.US_ASCII));
  }

  /**
   * Runs the server alone, in its own JVM, so that it can be pinned to its own CPU apart from the
   * callers (see {@code BENCHMARKS.md}): {@code taskset -c 1 java -cp benchmarks.jar
   * io.github.resilienthttp.bench.LoopbackHttpServer 18080}, then run a caller with
   * {@code -Dbench.server=http://127.0.0.1:18080}. Runs until killed.
   */
  public static void main(String[] args) throws Exception {
    LoopbackHttpServer server = start(args.length > 0 ? Integer.parseInt(args[0]) : 18080);
    System.out.println("listening on " + server.url("/"));
    new java.util.concurrent.CountDownLatch(1).await();
  }

  static LoopbackHttpServer start(int port) throws IOException {
    return start(port, RESPONSE, RESPONSE);
  }

  private static LoopbackHttpServer start(int port, byte[] answerToPost, byte[] answerToOthers)
      throws IOException {
    ServerSocket socket = new ServerSocket();
    socket.setReuseAddress(true);
    socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 512);
    LoopbackHttpServer server = new LoopbackHttpServer(socket, answerToPost, answerToOthers);
    Thread acceptor = new Thread(server::acceptLoop, "loopback-http-acceptor");
    acceptor.setDaemon(true);
    acceptor.start();
    return server;
  }

  HttpUrl url(String path) {
    return new HttpUrl.Builder().scheme("http")
        .host(serverSocket.getInetAddress().getHostAddress())
        .port(serverSocket.getLocalPort()).build().resolve(path);
  }

  long requestCount() {
    return requests.get();
  }

  /** {@return the connections accepted since the server started} */
  long acceptedCount() {
    return accepted.get();
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket s = serverSocket.accept();
        s.setTcpNoDelay(true);
        accepted.incrementAndGet();
        connections.add(s);
        Thread t = new Thread(() -> serve(s), "loopback-http-" + s.getPort());
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        if (!closed) {
          e.printStackTrace();
        }
        return;
      }
    }
  }

  /** Reads requests off one connection and answers each with its precomputed answer. */
  private void serve(Socket socket) {
    byte[] buf = new byte[16 * 1024];
    int start = 0;
    int end = 0;
    try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
      while (true) {
        int headerEnd = indexOfHeaderEnd(buf, start, end);
        while (headerEnd < 0) {
          if (start > 0) {
            System.arraycopy(buf, start, buf, 0, end - start);
            end -= start;
            start = 0;
          }
          if (end == buf.length) {
            throw new IOException("request headers larger than " + buf.length + " bytes");
          }
          int n = in.read(buf, end, buf.length - end);
          if (n < 0) {
            return;
          }
          end += n;
          headerEnd = indexOfHeaderEnd(buf, start, end);
        }
        boolean post = buf[start] == 'P' && buf[start + 1] == 'O';
        long bodyLeft = contentLength(buf, start, headerEnd);
        start = headerEnd;
        // Skip the body: first what is buffered, then from the socket.
        int buffered = (int) Math.min(bodyLeft, end - start);
        start += buffered;
        bodyLeft -= buffered;
        while (bodyLeft > 0) {
          int n = in.read(buf, 0, (int) Math.min(buf.length, bodyLeft));
          if (n < 0) {
            return;
          }
          bodyLeft -= n;
          start = 0;
          end = 0;
        }
        if (start == end) {
          start = 0;
          end = 0;
        }
        requests.incrementAndGet();
        out.write(post ? answerToPost : answerToOthers);
        out.flush();
      }
    } catch (IOException e) {
      // The client went away, or the server is closing.
    } finally {
      connections.remove(socket);
    }
  }

  /** The index just after the first CRLFCRLF in {@code buf[from, to)}, or -1. */
  private static int indexOfHeaderEnd(byte[] buf, int from, int to) {
    for (int i = from; i + 3 < to; i++) {
      if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
        return i + 4;
      }
    }
    return -1;
  }

  /** The value of the Content-Length header in {@code buf[from, to)}, or 0. */
  private static long contentLength(byte[] buf, int from, int to) {
    for (int line = from; line < to; ) {
      if (startsWithIgnoreCase(buf, line, to, CONTENT_LENGTH)) {
        long value = 0;
        for (int i = line + CONTENT_LENGTH.length; i < to && buf[i] != '\r'; i++) {
          byte b = buf[i];
          if (b >= '0' && b <= '9') {
            value = value * 10 + (b - '0');
          }
        }
        return value;
      }
      while (line < to && buf[line] != '\n') {
        line++;
      }
      line++;
    }
    return 0;
  }

  private static boolean startsWithIgnoreCase(byte[] buf, int at, int to, byte[] lowerPrefix) {
    if (at + lowerPrefix.length > to) {
      return false;
    }
    for (int i = 0; i < lowerPrefix.length; i++) {
      byte b = buf[at + i];
      if (b >= 'A' && b <= 'Z') {
        b = (byte) (b + ('a' - 'A'));
      }
      if (b != lowerPrefix[i]) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() throws IOException {
    closed = true;
    serverSocket.close();
    for (Socket s : connections) {
      s.close();
    }
  }
}

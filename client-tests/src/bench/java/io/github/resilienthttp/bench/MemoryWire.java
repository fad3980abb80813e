package io.github.resilienthttp.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.SocketFactory;
import okio.AsyncTimeout;

/**
 * An HTTP/1.1 "network" inside the JVM, for the no-network harnesses: a {@link SocketFactory} whose
 * sockets connect to nothing and answer every request written to them with the same canned
 * response, on the calling thread. With it OkHttp runs its whole call, network half included (the
 * bridge, the connection pool, the network interceptors, the request's encoding and the response's
 * parsing, the event listener's request and response events), where the answering application
 * interceptor of {@link CallerOverhead#withoutNetwork} cuts the call short before any of that. So
 * what a stack does per network request (the SDK's network interceptor and its "sent" event) is
 * counted, without the kernel's sockets or a server thread. (OkHttp 5 still wakes its own task
 * thread once per call, to schedule its connection pool's cleanup, as it does on a real network.)
 * Benchmark code only.
 *
 * <p>A request is complete when its header block ends ({@code CRLF CRLF}) and, if it declared a
 * {@code Content-Length}, when that many body bytes followed (a chunked body is not parsed; the
 * harnesses send none). A read while no complete request waits for its answer times out at once,
 * which is what OkHttp's health check of a pooled connection expects from an idle peer. Each
 * socket is used by one call at a time, as OkHttp uses an HTTP/1.1 connection; the factory is
 * thread-safe.
 *
 * <p>Every read and write of a socket enters an Okio {@link AsyncTimeout} (OkHttp's read and write
 * timeouts), and an entry that goes to the head of Okio's timeout queue wakes Okio's watchdog
 * thread: with one caller and no other timeout pending, that is two wake-ups per call, a few
 * microseconds of kernel time on the calling thread that would bury the tens of nanoseconds these
 * harnesses compare. So the factory keeps a timeout of its own ({@link QuietHead}) at the head of
 * that queue, as the other calls' timeouts do in a busy application. The stacks' own timers still
 * wake the watchdog when they go to the head.
 */
final class MemoryWire extends SocketFactory {
  /**
   * How far ahead {@link QuietHead} keeps its timeout: under OkHttp's default read and write
   * timeouts (10 s), so that a socket's timeout never goes to the head of Okio's queue.
   */
  private static final long QUIET_HEAD_SECONDS = 9;

  private final byte[] response;
  private final QuietHead quietHead = new QuietHead();
  private final AtomicInteger sockets = new AtomicInteger();

  /**
   * @param status the status line's code and reason, as {@code "200 OK"}
   * @param contentType the response's {@code Content-Type}
   * @param body the response's body, sent with a {@code Content-Length}
   */
  MemoryWire(String status, String contentType, byte[] body) {
    byte[] head = ("HTTP/1.1 " + status + "\r\nContent-Type: " + contentType
        + "\r\nContent-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
    response = new byte[head.length + body.length];
    System.arraycopy(head, 0, response, 0, head.length);
    System.arraycopy(body, 0, response, head.length, body.length);
  }

  /**
   * How many sockets (connections) this factory made: one per caller thread when OkHttp reuses its
   * pooled connection, as it should here; more means some calls paid for a connection's set-up.
   */
  int socketsCreated() {
    return sockets.get();
  }

  /**
   * A timeout that stays at the head of Okio's queue: entered {@value #QUIET_HEAD_SECONDS} s ahead,
   * and entered again each time it fires (once every {@value #QUIET_HEAD_SECONDS} s).
   */
  private static final class QuietHead extends AsyncTimeout {
    QuietHead() {
      timeout(QUIET_HEAD_SECONDS, TimeUnit.SECONDS);
      enter();
    }

    @Override
    protected void timedOut() {
      exit();
      enter();
    }
  }

  @Override
  public Socket createSocket() {
    sockets.incrementAndGet();
    return new WireSocket(response);
  }

  @Override
  public Socket createSocket(String host, int port) {
    // Every socket is the same in-JVM wire; the address is not used.
    return createSocket();
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort) {
    return createSocket();
  }

  @Override
  public Socket createSocket(InetAddress host, int port) {
    return createSocket();
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress,
      int localPort) {
    return createSocket();
  }

  /** One connection: a request parser on the write side, the canned answers on the read side. */
  static final class WireSocket extends Socket {
    private final byte[] response;
    private final Object lock = new Object();
    private volatile InetSocketAddress remote =
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 80);
    private int soTimeout;
    private boolean closed;
    private boolean inputShutdown;
    private boolean outputShutdown;
    /** Answers owed: complete requests whose answer has not been read to its end. */
    private int owed;
    /** How much of the current answer has been read. */
    private int answerOffset;
    // The request parser: CRLF CRLF seen so far, the header line being read, body bytes left.
    private int terminator;
    private final StringBuilder line = new StringBuilder();
    private long contentLength;
    private long bodyLeft = -1;

    WireSocket(byte[] response) {
      this.response = response;
    }

    @Override
    public void connect(SocketAddress endpoint) {
      connect(endpoint, 0);
    }

    @Override
    public void connect(SocketAddress endpoint, int timeout) {
      if (endpoint instanceof InetSocketAddress a) {
        remote = a;
      }
    }

    @Override
    public InputStream getInputStream() {
      return new InputStream() {
        @Override
        public int read() throws IOException {
          byte[] one = new byte[1];
          return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          return readAnswer(b, off, len);
        }
      };
    }

    @Override
    public OutputStream getOutputStream() {
      return new OutputStream() {
        @Override
        public void write(int b) {
          written(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
          written(b, off, len);
        }
      };
    }

    private int readAnswer(byte[] b, int off, int len) throws IOException {
      synchronized (lock) {
        if (closed || inputShutdown) {
          return -1;
        }
        if (owed == 0) {
          // An idle peer: nothing to read. OkHttp's health check reads with a short timeout.
          throw new SocketTimeoutException("no request waits for an answer");
        }
        int n = Math.min(len, response.length - answerOffset);
        System.arraycopy(response, answerOffset, b, off, n);
        answerOffset += n;
        if (answerOffset == response.length) {
          answerOffset = 0;
          owed--;
        }
        return n;
      }
    }

    private void written(byte[] b, int off, int len) {
      synchronized (lock) {
        for (int i = off; i < off + len; i++) {
          if (bodyLeft > 0) {
            int n = (int) Math.min(bodyLeft, off + len - i);
            bodyLeft -= n;
            i += n - 1;
            if (bodyLeft == 0) {
              requestComplete();
            }
            continue;
          }
          headerByte(b[i]);
        }
      }
    }

    private void headerByte(byte c) {
      terminator = (c == '\r' || c == '\n') ? terminator + 1 : 0;
      if (c == '\n') {
        String l = line.toString();
        line.setLength(0);
        int colon = l.indexOf(':');
        if (colon > 0 && l.substring(0, colon).trim().equalsIgnoreCase("Content-Length")) {
          contentLength = Long.parseLong(l.substring(colon + 1).trim());
        }
      } else if (c != '\r') {
        line.append((char) (c & 0xff));
      }
      if (terminator == 4) {
        terminator = 0;
        if (contentLength > 0) {
          bodyLeft = contentLength;
          contentLength = 0;
        } else {
          requestComplete();
        }
      }
    }

    private void requestComplete() {
      bodyLeft = -1;
      owed++;
    }

    @Override
    public void setSoTimeout(int timeout) {
      synchronized (lock) {
        soTimeout = timeout;
      }
    }

    @Override
    public int getSoTimeout() {
      synchronized (lock) {
        return soTimeout;
      }
    }

    @Override
    public void setTcpNoDelay(boolean on) {}

    @Override
    public void setKeepAlive(boolean on) {}

    @Override
    public boolean isConnected() {
      return true;
    }

    @Override
    public boolean isBound() {
      return true;
    }

    @Override
    public boolean isClosed() {
      synchronized (lock) {
        return closed;
      }
    }

    @Override
    public boolean isInputShutdown() {
      synchronized (lock) {
        return inputShutdown;
      }
    }

    @Override
    public boolean isOutputShutdown() {
      synchronized (lock) {
        return outputShutdown;
      }
    }

    @Override
    public void shutdownInput() {
      synchronized (lock) {
        inputShutdown = true;
      }
    }

    @Override
    public void shutdownOutput() {
      synchronized (lock) {
        outputShutdown = true;
      }
    }

    @Override
    public void close() {
      synchronized (lock) {
        closed = true;
      }
    }

    @Override
    public InetAddress getInetAddress() {
      return remote.getAddress();
    }

    @Override
    public int getPort() {
      return remote.getPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
      return remote;
    }

    @Override
    public InetAddress getLocalAddress() {
      return InetAddress.getLoopbackAddress();
    }

    @Override
    public int getLocalPort() {
      return 40000;
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
      return new InetSocketAddress(InetAddress.getLoopbackAddress(), 40000);
    }
  }
}

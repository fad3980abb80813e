package io.github.resilienthttp.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * A TCP proxy on loopback that applies one fault to each new client connection, then closes it (the
 * client's retry opens a fresh one): pass, reset before the request reaches the server (no effect),
 * reset once the request reached the server (it goes on processing while the client retries), reset
 * after the server answered (the response is lost after the commit), or delay the answer.
 */
final class FaultProxy implements AutoCloseable {
  enum Fault { PASS, RESET_BEFORE_SEND, RESET_WHILE_PROCESSING, LOSE_RESPONSE_AFTER_COMMIT, DELAY_RESPONSE }

  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final Supplier<Fault> faults;
  private final long delayMillis;
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "fault-proxy");
    t.setDaemon(true);
    return t;
  });
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  final ConcurrentLinkedQueue<Fault> applied = new ConcurrentLinkedQueue<>();

  FaultProxy(InetSocketAddress target, Supplier<Fault> faults, long delayMillis) throws IOException {
    this.target = target;
    this.faults = faults;
    this.delayMillis = delayMillis;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    pool.execute(this::acceptLoop);
  }

  int port() {
    return listener.getLocalPort();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        open.add(client);
        Fault fault = faults.get();
        applied.add(fault);
        pool.execute(() -> serve(client, fault));
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void serve(Socket client, Fault fault) {
    try (client; Socket server = new Socket(target.getAddress(), target.getPort())) {
      open.add(server);
      if (fault == Fault.RESET_BEFORE_SEND) {
        client.getInputStream().read(new byte[16]); // the request started; none of it is forwarded
        reset(client);
        return;
      }
      if (fault == Fault.RESET_WHILE_PROCESSING) {
        byte[] request = new byte[64 * 1024];
        int n = client.getInputStream().read(request);
        if (n > 0) server.getOutputStream().write(request, 0, n); // a small request arrives whole
        reset(client);
        server.getInputStream().transferTo(OutputStream.nullOutputStream());
        return;
      }
      pool.execute(() -> pipe(client, server));
      InputStream fromServer = server.getInputStream();
      OutputStream toClient = client.getOutputStream();
      byte[] buf = new byte[8192];
      int n = fromServer.read(buf); // the server has committed and answered
      if (n < 0) return;
      if (fault == Fault.LOSE_RESPONSE_AFTER_COMMIT) {
        reset(client);
        return;
      }
      if (fault == Fault.DELAY_RESPONSE) Thread.sleep(delayMillis);
      do {
        toClient.write(buf, 0, n);
        toClient.flush();
      } while ((n = fromServer.read(buf)) >= 0);
    } catch (IOException | InterruptedException ended) {
      // the client or the server closed: the connection ends here
    }
  }

  private static void pipe(Socket from, Socket to) {
    try {
      from.getInputStream().transferTo(to.getOutputStream());
      to.shutdownOutput();
    } catch (IOException ended) {
      // closed
    }
  }

  private static void reset(Socket s) throws IOException {
    s.setSoLinger(true, 0);
    s.close();
  }

  @Override
  public void close() throws IOException {
    listener.close();
    for (Socket s : open) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
    pool.shutdownNow();
  }
}

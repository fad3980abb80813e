package io.github.resilienthttp.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ServerSocketFactory;

/**
 * Creates server sockets whose accepted connections have {@code TCP_NODELAY} set.
 *
 * <p>MockWebServer flushes the response headers and the body separately; with Nagle's algorithm on
 * the server side the body then waits for the client's delayed ACK, which costs about 40 ms per
 * response on Linux loopback. Disabling Nagle makes each exchange take about a millisecond.
 * Stateless and thread-safe. For a MockWebServer of your own:
 * {@code server.setServerSocketFactory(new NoDelayServerSocketFactory())}.
 */
public final class NoDelayServerSocketFactory extends ServerSocketFactory {
  /** Creates the factory. */
  public NoDelayServerSocketFactory() {}

  @Override
  public ServerSocket createServerSocket() throws IOException {
    return new NoDelayServerSocket();
  }

  @Override
  public ServerSocket createServerSocket(int port) throws IOException {
    ServerSocket socket = new NoDelayServerSocket();
    socket.bind(new java.net.InetSocketAddress(port));
    return socket;
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog) throws IOException {
    ServerSocket socket = new NoDelayServerSocket();
    socket.bind(new java.net.InetSocketAddress(port), backlog);
    return socket;
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog, InetAddress address)
      throws IOException {
    ServerSocket socket = new NoDelayServerSocket();
    socket.bind(new java.net.InetSocketAddress(address, port), backlog);
    return socket;
  }

  private static final class NoDelayServerSocket extends ServerSocket {
    NoDelayServerSocket() throws IOException {
      super();
      setReuseAddress(true);
    }

    /**
     * Always on, whatever MockWebServer asks for (it turns it off for a random port): a restarted
     * server binds its predecessor's port while the connections that one accepted, which inherit
     * the option, are still closing.
     */
    @Override
    public void setReuseAddress(boolean on) throws java.net.SocketException {
      super.setReuseAddress(true);
    }

    @Override
    public Socket accept() throws IOException {
      Socket socket = super.accept();
      try {
        socket.setTcpNoDelay(true);
      } catch (IOException e) {
        // Best effort: a connection that is already gone fails on first use anyway.
      }
      return socket;
    }
  }
}

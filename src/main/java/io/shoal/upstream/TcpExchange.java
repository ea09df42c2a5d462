package io.shoal.upstream;

import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Upstream queries over TCP (RFC 7766 framing), used when a UDP answer came back truncated.
 * Rare enough that blocking sockets on a small pool of their own are the simple right choice.
 */
public final class TcpExchange implements AutoCloseable {
  private final ThreadPoolExecutor pool;

  public TcpExchange(int threads) {
    this.pool = new ThreadPoolExecutor(
        threads, threads, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1024), r -> {
          Thread t = new Thread(r, "shoal-upstream-tcp");
          t.setDaemon(true);
          return t;
        });
    this.pool.allowCoreThreadTimeOut(true);
  }

  public CompletableFuture<byte[]> exchange(
      InetSocketAddress server, byte[] query, int id, CacheKey key, Duration timeout) {
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    try {
      pool.execute(() -> {
        try {
          result.complete(blockingExchange(server, query, id, key, (int) timeout.toMillis()));
        } catch (UpstreamException e) {
          result.completeExceptionally(e);
        }
      });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new UpstreamException("overload", "too many TCP upstream queries queued"));
    }
    return result;
  }

  private static byte[] blockingExchange(
      InetSocketAddress server, byte[] query, int id, CacheKey key, int timeoutMs) throws UpstreamException {
    try (Socket s = new Socket()) {
      s.connect(server, timeoutMs);
      s.setSoTimeout(timeoutMs);
      OutputStream out = s.getOutputStream();
      byte[] framed = new byte[query.length + 2];
      framed[0] = (byte) (query.length >>> 8);
      framed[1] = (byte) query.length;
      System.arraycopy(query, 0, framed, 2, query.length);
      out.write(framed);
      out.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      while (true) {
        int len = in.readUnsignedShort();
        byte[] resp = in.readNBytes(len);
        if (resp.length != len) {
          throw new UpstreamException("error", server + " closed the TCP connection mid-answer");
        }
        if (ScannedAnswer.answers(resp, len, id, key)) {
          return resp;
        }
      }
    } catch (SocketTimeoutException e) {
      throw new UpstreamException("timeout", "no TCP answer from " + server);
    } catch (IOException e) {
      throw new UpstreamException("error", "TCP to " + server + ": " + e.getMessage());
    }
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}

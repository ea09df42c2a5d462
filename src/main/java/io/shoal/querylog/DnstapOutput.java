package io.shoal.querylog;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where dnstap frames go: a file (START, data, STOP) or a collector's Unix socket (the
 * bidirectional handshake, reconnected with back-off while the collector is away, and dropped
 * when it takes no bytes for {@link SocketOutput#WRITE_TIMEOUT}). Used by the writer thread only,
 * except {@link #abort()}.
 */
abstract class DnstapOutput {
  private static final int BUFFER = 64 * 1024;

  /** The frames' stream, once opened (a socket's last one stays after it closes: writes then fail). */
  OutputStream out;

  /** Whether a frame can be written now; a socket (re)connects here, no more often than its back-off allows. */
  abstract boolean ready();

  void write(byte[] payload) throws IOException {
    FrameStreams.data(out, payload);
  }

  void flush() {
    if (out == null) {
      return;
    }
    try {
      out.flush();
    } catch (IOException e) {
      broken(e);
    }
  }

  /** A write failed: the frame is lost; a socket drops its connection and tries again later. */
  abstract void broken(IOException e);

  /** Ends the stream as Frame Streams says (STOP, and for a socket the peer's FINISH) and closes. */
  abstract void finish();

  /** Closes now, from any thread: unblocks a writer stuck on a collector that stopped reading. */
  abstract void abort();

  /** A file, replaced when shoal starts: one Frame Streams stream per run, as dnstap-read expects. */
  static DnstapOutput file(Path path) throws IOException {
    return new FileOutput(path);
  }

  static DnstapOutput socket(Path path) {
    return new SocketOutput(path);
  }

  private static final class FileOutput extends DnstapOutput {
    private static final Logger log = LoggerFactory.getLogger(FileOutput.class);
    private final Path path;
    private boolean failed;

    FileOutput(Path path) throws IOException {
      this.path = path;
      this.out = new BufferedOutputStream(Files.newOutputStream(path), BUFFER);
      out.write(FrameStreams.control(FrameStreams.START, FrameStreams.DNSTAP));
    }

    @Override
    boolean ready() {
      return !failed;
    }

    @Override
    void broken(IOException e) {
      if (!failed) {
        // A half-written frame would make the rest unreadable: stop writing rather than go on.
        log.warn("dnstap file {}: {}; dnstap events are dropped from here on", path, e.toString());
        failed = true;
      }
    }

    @Override
    void finish() {
      try {
        if (!failed) {
          out.write(FrameStreams.control(FrameStreams.STOP, null));
        }
        out.close();
      } catch (IOException e) {
        log.warn("dnstap file {}: {}", path, e.toString());
      }
    }

    @Override
    void abort() {
      // A file does not block for long: finish() closes it.
    }
  }

  private static final class SocketOutput extends DnstapOutput {
    private static final Logger log = LoggerFactory.getLogger(SocketOutput.class);
    private static final long MIN_BACKOFF = Duration.ofMillis(100).toNanos();
    private static final long MAX_BACKOFF = Duration.ofSeconds(5).toNanos();
    /**
     * Longest a write, flush or handshake may block on the collector: one that completed its
     * handshake and stopped reading would otherwise hold the writer thread for good (events are
     * dropped and counted meanwhile, answers never wait). The connection is then closed and made
     * again after the back-off.
     */
    static final long WRITE_TIMEOUT = Duration.ofSeconds(2).toNanos();
    private static final long WATCH_EVERY_MS = 200;

    private final Path path;
    private volatile SocketChannel channel;
    private volatile boolean aborted;
    /** Whether the writer is in a call that may block on the collector, and since when. */
    private volatile boolean busy;
    private volatile long busySince;
    private volatile boolean stalled;
    private final ScheduledExecutorService watchdog;
    private long nextTry = System.nanoTime();
    private long backoff = MIN_BACKOFF;
    private boolean down;

    SocketOutput(Path path) {
      this.path = path;
      this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "shoal-dnstap-watchdog");
        t.setDaemon(true);
        return t;
      });
      watchdog.scheduleWithFixedDelay(this::watch, WATCH_EVERY_MS, WATCH_EVERY_MS, TimeUnit.MILLISECONDS);
    }

    /** Closes the connection under a call blocked past the timeout: the call then fails. */
    private void watch() {
      if (busy && System.nanoTime() - busySince > WRITE_TIMEOUT) {
        stalled = true;
        close();
      }
    }

    private void busy() {
      busySince = System.nanoTime();
      busy = true;
    }

    private void idle() {
      busy = false;
    }

    @Override
    void write(byte[] payload) throws IOException {
      busy();
      try {
        super.write(payload);
      } finally {
        idle();
      }
    }

    @Override
    boolean ready() {
      if (channel != null) {
        return true;
      }
      long now = System.nanoTime();
      if (aborted || now - nextTry < 0) {
        return false;
      }
      try {
        busy();
        try {
          connect();
        } finally {
          idle();
        }
        backoff = MIN_BACKOFF;
        if (down) {
          log.info("dnstap collector at {} connected again", path);
          down = false;
        }
        return true;
      } catch (IOException e) {
        close();
        nextTry = now + backoff;
        backoff = Math.min(backoff * 2, MAX_BACKOFF);
        if (!down) {
          log.warn("dnstap collector at {}: {}; dnstap events are dropped (and counted) until it answers",
              path, e.toString());
          down = true;
        }
        return false;
      }
    }

    private void connect() throws IOException {
      SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
      channel = ch;
      ch.connect(UnixDomainSocketAddress.of(path));
      out = new BufferedOutputStream(Channels.newOutputStream(ch), BUFFER);
      InputStream in = Channels.newInputStream(ch);
      out.write(FrameStreams.control(FrameStreams.READY, FrameStreams.DNSTAP));
      out.flush();
      FrameStreams.Control accept = FrameStreams.readControl(in);
      if (accept.type() != FrameStreams.ACCEPT) {
        throw new IOException("collector answered READY with control type " + accept.type() + ", not ACCEPT");
      }
      if (accept.contentType() != null && !FrameStreams.DNSTAP.equals(accept.contentType())) {
        throw new IOException("collector accepts " + accept.contentType() + ", not " + FrameStreams.DNSTAP);
      }
      out.write(FrameStreams.control(FrameStreams.START, FrameStreams.DNSTAP));
    }

    @Override
    void broken(IOException e) {
      if (!down && !aborted) {
        log.warn("dnstap collector at {}: {}; reconnecting", path,
            stalled ? "took no bytes for " + WRITE_TIMEOUT / 1_000_000 + " ms" : e.toString());
        down = true;
      }
      stalled = false;
      close();
      nextTry = System.nanoTime() + backoff;
      backoff = Math.min(backoff * 2, MAX_BACKOFF);
    }

    @Override
    void flush() {
      // Not while disconnected: a failed flush would put the next connection attempt off again.
      if (channel != null) {
        busy();
        try {
          super.flush();
        } finally {
          idle();
        }
      }
    }

    @Override
    void finish() {
      SocketChannel ch = channel;
      if (ch == null) {
        watchdog.shutdownNow();
        return;
      }
      busy();
      try {
        out.write(FrameStreams.control(FrameStreams.STOP, null));
        out.flush();
        FrameStreams.readControl(Channels.newInputStream(ch));
      } catch (IOException e) {
        log.debug("dnstap collector at {} did not finish cleanly: {}", path, e.toString());
      } finally {
        idle();
      }
      close();
      watchdog.shutdownNow();
    }

    @Override
    void abort() {
      aborted = true;
      close();
      watchdog.shutdownNow();
    }

    private void close() {
      SocketChannel ch = channel;
      channel = null;
      if (ch != null) {
        try {
          ch.close();
        } catch (IOException ignored) {
          // closing: nothing more to lose
        }
      }
    }
  }
}

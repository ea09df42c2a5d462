package io.shoal.transport;

import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;

/**
 * Linux's batch calls for datagrams, {@code recvmmsg} and {@code sendmmsg}, reached through
 * jnr-ffi (which lmdbjava brings already): Java 17's NIO reads and sends one datagram per system
 * call. On a host where a system call costs what it costs in a virtual machine, a warm hit read
 * and answered in batches costs a third of what it costs through the JDK's channel (see
 * docs/performance.md, "Datagrams in batches"). The socket stays the JDK's: bound, configured,
 * sent to from other threads and closed through its {@link DatagramChannel}; only the reading
 * thread reads it, and sends its own replies, through these calls, on its file descriptor.
 */
final class LinuxDatagrams {
  /** recvmmsg: block for the first datagram only, then take what is already there. */
  static final int MSG_WAITFORONE = 0x10000;
  /** In a received message's flags: the datagram was longer than its buffer. */
  static final int MSG_TRUNC = 0x20;
  static final int AF_INET = 2;
  static final int AF_INET6 = 10;
  static final int EINTR = 4;
  static final int EAGAIN = 11;
  private static final int SHUT_RD = 0;
  private static final int SOL_SOCKET = 1;
  /** prctl: the calling thread's timer slack, in nanoseconds. */
  private static final int PR_SET_TIMERSLACK = 29;
  /** setsockopt: stamp each datagram with the time the kernel received it (a struct timespec, CLOCK_REALTIME). */
  static final int SO_TIMESTAMPNS = 35;

  /** The C library's calls, as jnr-ffi binds them; pointers are passed as addresses. */
  public interface LibC {
    @SaveError
    int recvmmsg(int fd, long msgvec, int vlen, int flags, long timeout);

    @SaveError
    int sendmmsg(int fd, long msgvec, int vlen, int flags);

    int shutdown(int fd, int how);

    @SaveError
    int setsockopt(int fd, int level, int optname, long optval, int optlen);

    int prctl(int option, long arg2, long arg3, long arg4, long arg5);
  }

  private static final LinuxDatagrams INSTANCE;
  private static final String UNAVAILABLE;

  static {
    LinuxDatagrams loaded = null;
    String why = null;
    String os = System.getProperty("os.name", "");
    String arch = System.getProperty("os.arch", "");
    if (!os.equals("Linux")) {
      why = "not Linux (" + os + ")";
    } else if (!arch.equals("amd64") && !arch.equals("aarch64")) {
      why = "the structures are laid out for 64-bit x86 and ARM, not " + arch;
    } else {
      try {
        LibC libc = LibraryLoader.create(LibC.class).load("c");
        Method fdVal = Class.forName("sun.nio.ch.DatagramChannelImpl").getDeclaredMethod("getFDVal");
        fdVal.setAccessible(true);
        loaded = new LinuxDatagrams(libc, Runtime.getRuntime(libc), fdVal);
      } catch (LinkageError | ReflectiveOperationException | RuntimeException e) {
        why = e.getClass().getSimpleName() + ": " + e.getMessage()
            + " (the JVM needs --add-opens java.base/sun.nio.ch=ALL-UNNAMED, which shoal's jar sets)";
      }
    }
    INSTANCE = loaded;
    UNAVAILABLE = why;
  }

  private final LibC libc;
  private final Runtime runtime;
  private final Method fdVal;

  private LinuxDatagrams(LibC libc, Runtime runtime, Method fdVal) {
    this.libc = libc;
    this.runtime = runtime;
    this.fdVal = fdVal;
  }

  /** The binding, or null where it cannot be had ({@link #unavailable} says why). */
  static LinuxDatagrams get() {
    return INSTANCE;
  }

  /** Why {@link #get} is null; null when it is not. */
  static String unavailable() {
    return UNAVAILABLE;
  }

  /** The file descriptor under a JDK datagram channel. */
  int fd(DatagramChannel channel) throws ReflectiveOperationException {
    return (Integer) fdVal.invoke(channel);
  }

  /** The native address of a direct buffer's first byte. */
  long address(ByteBuffer direct) {
    return Pointer.wrap(runtime, direct).address();
  }

  /** Datagrams read into {@code count} messages at {@code msgvec}; -1 on error ({@link #errno}). */
  int receive(int fd, long msgvec, int count) {
    return libc.recvmmsg(fd, msgvec, count, MSG_WAITFORONE, 0L);
  }

  /** Messages sent of {@code count} at {@code msgvec}; -1 when the first failed ({@link #errno}). */
  int send(int fd, long msgvec, int count) {
    return libc.sendmmsg(fd, msgvec, count, 0);
  }

  /**
   * Has the kernel stamp every datagram {@code fd} receives with the time it arrived, handed to
   * recvmmsg in each message's control data ({@link DatagramBatch#arrivedAtNanos}); false when it
   * refused.
   */
  boolean stampArrivals(int fd) {
    ByteBuffer one = ByteBuffer.allocateDirect(4).order(java.nio.ByteOrder.nativeOrder());
    one.putInt(0, 1);
    return libc.setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, address(one), 4) == 0;
  }

  /**
   * Has the kernel end the calling thread's timed sleeps within {@code nanos} of when they were
   * due: it otherwise lets them run 50 µs late to group wake-ups, which for a reader that sleeps a
   * few hundred microseconds per batch ({@code listen.udp_batch_wait}) is a fifth of its wait again.
   */
  void timerSlack(long nanos) {
    libc.prctl(PR_SET_TIMERSLACK, nanos, 0, 0, 0);
  }

  /** The error of the last failed call on this thread. */
  int errno() {
    return runtime.getLastError();
  }

  /**
   * Ends reading on {@code fd}: a thread waiting in recvmmsg on it returns at once, and every
   * later read returns nothing (Linux does this for an unconnected UDP socket too, though the call
   * itself reports ENOTCONN).
   */
  void shutdownReading(int fd) {
    libc.shutdown(fd, SHUT_RD);
  }
}

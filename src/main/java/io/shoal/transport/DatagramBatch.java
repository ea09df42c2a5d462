package io.shoal.transport;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The memory of one batch of datagrams as {@code recvmmsg} and {@code sendmmsg} take it: an
 * array of {@code struct mmsghdr}, each message with one {@code iovec} over a slot of its own in
 * a data area, and a {@code sockaddr_in6}-sized slot for its peer's address. Direct buffers in the
 * platform's byte order, laid out as on 64-bit Linux; allocated once per reading thread and
 * reused for every batch. Not thread-safe: one thread reads and fills it.
 */
final class DatagramBatch {
  /** sizeof(struct mmsghdr): a 56-byte msghdr, the 4-byte msg_len, 4 of padding. */
  static final int HEADER = 64;
  private static final int IOVEC = 16;
  /** Room for a sockaddr_in6 (28 bytes), rounded up. */
  private static final int NAME = 32;
  /**
   * Control data per message, room for one SCM_TIMESTAMPNS: a 16-byte cmsghdr (length, level,
   * type) and a 16-byte struct timespec.
   */
  private static final int CONTROL = 32;
  private static final int SCM_TIMESTAMPNS = LinuxDatagrams.SO_TIMESTAMPNS;
  private static final int SOCKADDR_IN = 16;
  private static final int SOCKADDR_IN6 = 28;
  private static final byte[] V4_MAPPED_PREFIX = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff};

  private final int capacity;
  private final int slot;
  private final ByteBuffer headers;
  private final ByteBuffer iovecs;
  private final ByteBuffer names;
  private final ByteBuffer data;
  /** Each message's control data (its arrival time), for a batch that receives; null for one that sends. */
  private final ByteBuffer control;
  private final long headersAddress;
  /** Messages filled for sending. */
  private int size;
  /** The last IPv4 sender made into an address, reused while datagrams come from it. */
  private int lastV4;
  private int lastPort = -1;
  private InetSocketAddress lastSender;

  /** A batch to send from, or to receive into without arrival times. */
  DatagramBatch(LinuxDatagrams os, int capacity, int slot) {
    this(os, capacity, slot, false);
  }

  /**
   * @param arrivals room for each message's arrival time, which recvmmsg hands over for a socket
   *     that {@link LinuxDatagrams#stampArrivals stamps} them ({@link #arrivedAtNanos})
   */
  DatagramBatch(LinuxDatagrams os, int capacity, int slot, boolean arrivals) {
    this.capacity = capacity;
    this.slot = slot;
    ByteOrder order = ByteOrder.nativeOrder();
    headers = ByteBuffer.allocateDirect(capacity * HEADER).order(order);
    iovecs = ByteBuffer.allocateDirect(capacity * IOVEC).order(order);
    names = ByteBuffer.allocateDirect(capacity * NAME).order(order);
    data = ByteBuffer.allocateDirect(capacity * slot).order(order);
    control = arrivals ? ByteBuffer.allocateDirect(capacity * CONTROL).order(order) : null;
    headersAddress = os.address(headers);
    long controlAddress = arrivals ? os.address(control) : 0;
    long iovecsAddress = os.address(iovecs);
    long namesAddress = os.address(names);
    long dataAddress = os.address(data);
    for (int i = 0; i < capacity; i++) {
      int h = i * HEADER;
      headers.putLong(h, namesAddress + (long) i * NAME); // msg_name
      headers.putInt(h + 8, NAME); // msg_namelen: room for any address
      headers.putLong(h + 16, iovecsAddress + (long) i * IOVEC); // msg_iov
      headers.putLong(h + 24, 1); // msg_iovlen
      iovecs.putLong(i * IOVEC, dataAddress + (long) i * slot); // iov_base
      iovecs.putLong(i * IOVEC + 8, slot); // iov_len: the whole slot
      if (arrivals) {
        headers.putLong(h + 32, controlAddress + (long) i * CONTROL); // msg_control
        headers.putLong(h + 40, CONTROL); // msg_controllen
      }
    }
  }

  int capacity() {
    return capacity;
  }

  /** The largest datagram a slot holds. */
  int slot() {
    return slot;
  }

  /** The address of message {@code i}'s header, for the batch calls. */
  long address(int i) {
    return headersAddress + (long) i * HEADER;
  }

  /**
   * Makes the first {@code received} messages ready to receive into again. recvmmsg writes only
   * their address lengths, flags and lengths, and takes no flags in: so only the address lengths
   * it shortened go back to room for any address; the slots' lengths were never changed.
   */
  void readyToReceive(int received) {
    for (int i = 0; i < received; i++) {
      headers.putInt(i * HEADER + 8, NAME); // msg_namelen
      if (control != null) {
        headers.putLong(i * HEADER + 40, CONTROL); // msg_controllen, which recvmmsg set to what it used
      }
    }
  }

  /**
   * When the kernel received message {@code i}, in nanoseconds since the epoch (CLOCK_REALTIME),
   * from its control data; -1 when it carries none (a batch without room for it, or a socket that
   * does not stamp arrivals).
   */
  long arrivedAtNanos(int i) {
    if (control == null || headers.getLong(i * HEADER + 40) < CONTROL) {
      return -1;
    }
    int c = i * CONTROL;
    if (control.getInt(c + 8) != 1 || control.getInt(c + 12) != SCM_TIMESTAMPNS) { // cmsg_level SOL_SOCKET
      return -1;
    }
    return control.getLong(c + 16) * 1_000_000_000L + control.getLong(c + 24);
  }

  /** Bytes received into message {@code i}. */
  int length(int i) {
    return headers.getInt(i * HEADER + 56);
  }

  /** Whether message {@code i} was cut to its slot. */
  boolean truncated(int i) {
    return (headers.getInt(i * HEADER + 48) & LinuxDatagrams.MSG_TRUNC) != 0;
  }

  /** Byte {@code offset} of message {@code i}'s data, unsigned. */
  int byteAt(int i, int offset) {
    return data.get(i * slot + offset) & 0xff;
  }

  /** The first {@code length} bytes of message {@code i}, into {@code to}. */
  void copy(int i, byte[] to, int length) {
    data.get(i * slot, to, 0, length);
  }

  /**
   * Who sent message {@code i}, as the JDK's channel would say it (an IPv4-mapped IPv6 sender is
   * an IPv4 address); null for an address family other than IPv4 and IPv6.
   */
  InetSocketAddress sender(int i) {
    int n = i * NAME;
    int family = names.getShort(n) & 0xffff;
    int port = Short.toUnsignedInt(Short.reverseBytes(names.getShort(n + 2)));
    try {
      if (family == LinuxDatagrams.AF_INET) {
        int v4 = Integer.reverseBytes(names.getInt(n + 4));
        return v4Sender(v4, port);
      }
      if (family == LinuxDatagrams.AF_INET6) {
        if (names.getLong(n + 8) == 0 && names.getInt(n + 16) == 0xffff0000) {
          return v4Sender(Integer.reverseBytes(names.getInt(n + 20)), port);
        }
        byte[] a = new byte[16];
        names.get(n + 8, a);
        int scope = names.getInt(n + 24);
        InetAddress address = scope == 0 ? InetAddress.getByAddress(a) : Inet6Address.getByAddress(null, a, scope);
        return new InetSocketAddress(address, port);
      }
    } catch (UnknownHostException e) {
      // an address of the right length: cannot happen
    }
    return null;
  }

  private InetSocketAddress v4Sender(int v4, int port) throws UnknownHostException {
    if (v4 != lastV4 || port != lastPort || lastSender == null) {
      byte[] a = {(byte) (v4 >>> 24), (byte) (v4 >>> 16), (byte) (v4 >>> 8), (byte) v4};
      lastSender = new InetSocketAddress(InetAddress.getByAddress(a), port);
      lastV4 = v4;
      lastPort = port;
    }
    return lastSender;
  }

  /** Messages filled for sending. */
  int size() {
    return size;
  }

  boolean full() {
    return size == capacity;
  }

  /** Empties the batch for the next sends. */
  void clear() {
    size = 0;
  }

  /**
   * Adds a message for {@code to} with the first {@code length} bytes of {@code wire} (at most
   * {@link #slot}), addressed as message {@code received} of {@code from} was sent, when {@code
   * from} is not null (a reply to it: its address bytes as they came), or else from {@code to}
   * as a socket of {@code family} takes it. False when {@code to} cannot be said so (unresolved,
   * or IPv6 to an IPv4 socket).
   */
  boolean add(byte[] wire, int length, InetSocketAddress to, DatagramBatch from, int received, boolean ipv6Socket) {
    int i = size;
    int h = i * HEADER;
    int n = i * NAME;
    if (from != null) {
      int fromNamelen = from.headers.getInt(received * HEADER + 8);
      for (int b = 0; b < NAME; b += 8) {
        names.putLong(n + b, from.names.getLong(received * NAME + b));
      }
      headers.putInt(h + 8, fromNamelen);
    } else {
      int namelen = encode(n, to, ipv6Socket);
      if (namelen == 0) {
        return false;
      }
      headers.putInt(h + 8, namelen);
    }
    headers.putInt(h + 48, 0);
    data.put(i * slot, wire, 0, length);
    iovecs.putLong(i * IOVEC + 8, length);
    size++;
    return true;
  }

  /** Writes {@code to} as a sockaddr at {@code n}; its length, or 0 when it cannot be. */
  private int encode(int n, InetSocketAddress to, boolean ipv6Socket) {
    InetAddress a = to.getAddress();
    if (a == null) {
      return 0;
    }
    short port = Short.reverseBytes((short) to.getPort());
    byte[] raw = a.getAddress();
    if (!ipv6Socket) {
      if (!(a instanceof Inet4Address)) {
        return 0;
      }
      names.putShort(n, (short) LinuxDatagrams.AF_INET);
      names.putShort(n + 2, port);
      names.put(n + 4, raw);
      names.putLong(n + 8, 0);
      return SOCKADDR_IN;
    }
    names.putShort(n, (short) LinuxDatagrams.AF_INET6);
    names.putShort(n + 2, port);
    names.putInt(n + 4, 0); // flow info
    if (a instanceof Inet4Address) {
      names.put(n + 8, V4_MAPPED_PREFIX);
      names.put(n + 20, raw);
      names.putInt(n + 24, 0);
    } else {
      names.put(n + 8, raw);
      names.putInt(n + 24, ((Inet6Address) a).getScopeId());
    }
    return SOCKADDR_IN6;
  }
}

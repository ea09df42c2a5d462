package io.shoal.transport.https;

import akka.util.ByteString;

/**
 * Follows the TLS record headers a client sends, to see from outside the TLS stage when its
 * handshake is over: the first application-data record (content type 23) is, in TLS 1.3, the
 * client's encrypted Finished and, in TLS 1.2, the first request, sent right after its Finished.
 * akka-http makes each connection's TLS stage itself and tells nobody of the handshake.
 */
final class TlsRecords {
  private static final int HEADER = 5;
  private static final int APPLICATION_DATA = 23;

  private final byte[] header = new byte[HEADER];
  private int headerFilled;
  /** Bytes of the current record's body still to skip. */
  private int bodyLeft;
  private boolean done;

  /** Reads {@code bytes}; true once an application-data record began (or the bytes are not TLS records: the engine will refuse them). */
  boolean applicationData(ByteString bytes) {
    int i = 0;
    int n = bytes.size();
    while (!done && i < n) {
      if (bodyLeft > 0) {
        int skip = Math.min(bodyLeft, n - i);
        bodyLeft -= skip;
        i += skip;
        continue;
      }
      header[headerFilled++] = bytes.apply(i++);
      if (headerFilled == HEADER) {
        headerFilled = 0;
        int type = header[0] & 0xFF;
        if (type == APPLICATION_DATA || type < 20 || type > 24) {
          done = true;
        }
        bodyLeft = ((header[3] & 0xFF) << 8) | (header[4] & 0xFF);
      }
    }
    return done;
  }
}

package io.shoal.transport.https;

import akka.util.ByteString;

/**
 * Follows the TLS record headers a client sends, to see from outside the TLS stage when its
 * handshake is over: the client's Finished is, in TLS 1.3, its first application-data record
 * (content type 23) and, in TLS 1.2, the first handshake record (22) after its ChangeCipherSpec
 * (20). akka-http makes each connection's TLS stage itself and tells nobody of the handshake.
 */
final class TlsRecords {
  private static final int HEADER = 5;
  private static final int CHANGE_CIPHER_SPEC = 20;
  private static final int HANDSHAKE = 22;
  private static final int APPLICATION_DATA = 23;

  private final byte[] header = new byte[HEADER];
  private int headerFilled;
  /** Bytes of the current record's body still to skip. */
  private int bodyLeft;
  private boolean changedCipher;
  private boolean done;

  /** Reads {@code bytes}; true once the client's Finished began (or the bytes are not TLS records: the engine will refuse them). */
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
        if (type == APPLICATION_DATA || (type == HANDSHAKE && changedCipher) || type < 20 || type > 24) {
          done = true;
        }
        changedCipher |= type == CHANGE_CIPHER_SPEC;
        bodyLeft = ((header[3] & 0xFF) << 8) | (header[4] & 0xFF);
      }
    }
    return done;
  }
}

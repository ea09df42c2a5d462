package io.shoal.transport.https;

import java.nio.ByteBuffer;

/** The HTTP side of a DoH connection (HTTP/1.1 or HTTP/2), driven by its {@link DohConnection}. */
interface HttpSession {
  /** Takes what it can of the client's bytes in {@code in} (read mode), leaving an incomplete unit there. */
  void read(ByteBuffer in);

  /** True while it takes more of the client's bytes (not held back by requests it has not answered yet). */
  boolean accepting();

  /** True while a request it took is not answered to its end (in flight, or waiting for the client's window). */
  boolean busy();

  /** True while an answer waits for the client to open its flow-control window. */
  boolean stalled();

  /** The connection closes on a deadline: tell the client if the protocol can (HTTP/2's GOAWAY). */
  void closing();
}

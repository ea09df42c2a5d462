package io.shoal.transport.https;

import static io.shoal.transport.https.Http2Frames.DEFAULT_WINDOW;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.MetaData;

/** One stream: its request as it arrives, then its response as the client's window lets it out. */
final class Http2Stream {
  final int id;
  MetaData.Request request;
  byte[] body = new byte[0];
  int bodyFilled;
  long bodyLength;
  boolean remoteClosed;
  long sendWindow;
  int recvWindow = DEFAULT_WINDOW;
  int recvConsumed;
  /** The response body not yet sent; null until the response comes. */
  ByteBuffer pending;

  Http2Stream(int id, long sendWindow) {
    this.id = id;
    this.sendWindow = sendWindow;
  }
}

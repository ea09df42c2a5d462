package io.shoal.querylog;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The Frame Streams bytes, against the layout fstrm documents (and fstrm_capture reads). */
class FrameStreamsTest {

  @Test
  void startCarriesTheDnstapContentType() {
    byte[] ct = "protobuf:dnstap.Dnstap".getBytes(StandardCharsets.US_ASCII);
    byte[] frame = FrameStreams.control(FrameStreams.START, FrameStreams.DNSTAP);
    ByteArrayOutputStream want = new ByteArrayOutputStream();
    want.writeBytes(new byte[] {0, 0, 0, 0}); // escape
    want.writeBytes(new byte[] {0, 0, 0, (byte) (4 + 4 + 4 + ct.length)}); // control frame length
    want.writeBytes(new byte[] {0, 0, 0, 2}); // START
    want.writeBytes(new byte[] {0, 0, 0, 1}); // CONTENT_TYPE field
    want.writeBytes(new byte[] {0, 0, 0, (byte) ct.length});
    want.writeBytes(ct);
    assertArrayEquals(want.toByteArray(), frame);
  }

  @Test
  void stopHasNoFields() {
    assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 3}, FrameStreams.control(FrameStreams.STOP, null));
  }

  @Test
  void aDataFrameIsItsBigEndianLengthAndPayload() throws IOException {
    byte[] payload = new byte[300];
    payload[0] = 7;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    FrameStreams.data(out, payload);
    byte[] wire = out.toByteArray();
    assertEquals(304, wire.length);
    assertArrayEquals(new byte[] {0, 0, 1, 44}, java.util.Arrays.copyOf(wire, 4));
    assertEquals(7, wire[4]);
    assertThrows(IllegalArgumentException.class, () -> FrameStreams.data(out, new byte[0]),
        "length 0 is the escape: an empty data frame would read as a control frame");
  }

  @Test
  void controlFramesReadBackWithTheirContentType() throws IOException {
    ByteArrayOutputStream stream = new ByteArrayOutputStream();
    stream.writeBytes(FrameStreams.control(FrameStreams.ACCEPT, FrameStreams.DNSTAP));
    stream.writeBytes(FrameStreams.control(FrameStreams.FINISH, null));
    ByteArrayInputStream in = new ByteArrayInputStream(stream.toByteArray());
    FrameStreams.Control accept = FrameStreams.readControl(in);
    assertEquals(FrameStreams.ACCEPT, accept.type());
    assertEquals(FrameStreams.DNSTAP, accept.contentType());
    FrameStreams.Control finish = FrameStreams.readControl(in);
    assertEquals(FrameStreams.FINISH, finish.type());
    assertNull(finish.contentType());
    assertThrows(EOFException.class, () -> FrameStreams.readControl(in));
  }

  @Test
  void aDataFrameOrAnOversizedControlFrameIsABrokenHandshake() {
    assertThrows(IOException.class,
        () -> FrameStreams.readControl(new ByteArrayInputStream(new byte[] {0, 0, 0, 5, 1, 2, 3, 4, 5})));
    assertThrows(IOException.class,
        () -> FrameStreams.readControl(new ByteArrayInputStream(new byte[] {0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1})));
  }
}

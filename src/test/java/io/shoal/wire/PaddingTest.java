package io.shoal.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** RFC 7830/8467 padding: replies to padded queries come in 468-byte blocks, others are untouched. */
class PaddingTest {
  private static Message message(boolean padded) throws Exception {
    Message m = new Message(7);
    m.addRecord(Record.newRecord(Name.fromString("padded.example."), Type.A, DClass.IN), Section.QUESTION);
    List<EDNSOption> options = padded ? List.of(new GenericEDNSOption(Padding.OPTION, new byte[0])) : List.of();
    m.addRecord(new OPTRecord(1232, 0, 0, 0, options), Section.ADDITIONAL);
    return m;
  }

  private static byte[] reply() throws Exception {
    Message r = message(false);
    r.getHeader().setFlag(org.xbill.DNS.Flags.QR);
    r.addRecord(new ARecord(Name.fromString("padded.example."), DClass.IN, 60,
        java.net.InetAddress.getByName("192.0.2.1")), Section.ANSWER);
    // shoal's OPT is the last record, as in every reply it renders
    Record opt = r.getOPT();
    r.removeRecord(opt, Section.ADDITIONAL);
    r.addRecord(opt, Section.ADDITIONAL);
    return r.toWire();
  }

  @Test
  void aReplyToAPaddedQueryFillsWhole468ByteBlocksAndStillParses() throws Exception {
    byte[] padded = Padding.forQuery(message(true).toWire(), Optional.of(reply())).orElseThrow();
    assertEquals(0, padded.length % Padding.BLOCK);
    assertEquals(Padding.BLOCK, padded.length);
    Message parsed = new Message(padded);
    assertEquals("192.0.2.1", ((ARecord) parsed.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
    assertTrue(parsed.getOPT().getOptions(Padding.OPTION).size() == 1);
  }

  @Test
  void aReplyToAnUnpaddedQueryIsUntouched() throws Exception {
    byte[] reply = reply();
    assertArrayEquals(reply, Padding.forQuery(message(false).toWire(), Optional.of(reply)).orElseThrow());
    assertEquals(Optional.empty(), Padding.forQuery(message(true).toWire(), Optional.empty()));
  }
}

package io.shoal.ingress;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** When a hit claims a prefetch: in its answer's last tenth, on the key's owner, not while stopping. */
class PrefetchTest {
  private static final long NOW = 1_800_000_000_000L;
  /** 60 s answers stored 55 s ago: 5 s left, in the last tenth. */
  private static final long STORED = NOW - 55_000;

  private static CachedAnswer answer(String name) throws Exception {
    Name n = Name.fromString(name);
    Message m = new Message(7);
    m.getHeader().setFlag(Flags.QR);
    m.addRecord(Record.newRecord(n, Type.A, DClass.IN), Section.QUESTION);
    m.addRecord(new ARecord(n, DClass.IN, 60, InetAddress.getByName("192.0.2.1")), Section.ANSWER);
    return CachedAnswer.of(ScannedAnswer.fromUpstream(m.toWire()), STORED, STORED + 60_000);
  }

  private static CacheKey key(String name) {
    return CacheKey.of(name, Type.A, DClass.IN, 0);
  }

  @Test
  void aHitInTheLastTenthClaimsOnceAndOnlyOnTheOwner() throws Exception {
    Prefetch prefetch = new Prefetch(true, 100);
    CachedAnswer a = answer("a.example.");
    assertFalse(prefetch.claim(key("a.example."), a, STORED + 30_000, k -> true), "half its lifetime left");
    assertFalse(prefetch.claim(key("a.example."), a, NOW, k -> false), "another node owns it");
    assertTrue(prefetch.claim(key("a.example."), a, NOW, k -> true));
    assertFalse(prefetch.claim(key("a.example."), a, NOW, k -> true), "claimed already");
  }

  @Test
  void aStoppingNodeNoLongerPrefetchesWhateverAReloadSays() throws Exception {
    Prefetch prefetch = new Prefetch(true, 100);
    prefetch.stop();
    assertFalse(prefetch.claim(key("b.example."), answer("b.example."), NOW, k -> true));
    prefetch.enable(true);
    assertFalse(prefetch.claim(key("b.example."), answer("b.example."), NOW, k -> true), "after a reload too");
  }
}

package io.shoal.dnssec;

import io.shoal.config.DnssecSettings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.testing.Await;
import io.shoal.upstream.Upstream;
import io.shoal.wire.DnsQuery;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Type;

/** The validator's head resolver: one upstream query per question at a time, nothing kept for long. */
class UpstreamResolverTest {
  /** An upstream that answers when the test says so, and remembers what it was asked. */
  private static final class HeldUpstream implements Upstream {
    final List<DnsQuery> asked = new ArrayList<>();
    final List<CompletableFuture<Outcome>> pending = new ArrayList<>();

    @Override
    public synchronized CompletionStage<Outcome> forward(DnsQuery query) {
      asked.add(query);
      CompletableFuture<Outcome> f = new CompletableFuture<>();
      pending.add(f);
      return f;
    }
  }

  private static final UpstreamResolver.Question KEY =
      new UpstreamResolver.Question(Name.fromConstantString("signed.test."), Type.DNSKEY, DClass.IN);

  private static byte[] reply() {
    Message m = org.xbill.DNS.Message.newQuery(org.xbill.DNS.Record.newRecord(KEY.name(), KEY.type(), KEY.dclass()));
    m.getHeader().setFlag(Flags.QR);
    return m.toWire();
  }

  @Test
  void concurrentAsksShareOneQuerySentWithDoAndCd() throws Exception {
    HeldUpstream upstream = new HeldUpstream();
    UpstreamResolver head = new UpstreamResolver(upstream, Runnable::run, SignatureKeys.choose(DnssecSettings.CryptoProvider.AUTO));
    Message ask = Message.newQuery(org.xbill.DNS.Record.newRecord(KEY.name(), KEY.type(), KEY.dclass()));
    CompletableFuture<Message> a = head.sendAsync(ask).toCompletableFuture();
    CompletableFuture<Message> b = head.sendAsync(ask).toCompletableFuture();
    assertEquals(1, upstream.asked.size());
    DnsQuery sent = upstream.asked.get(0);
    assertTrue(sent.dnssecOk());
    assertTrue(sent.checkingDisabled());
    upstream.pending.get(0).complete(new Upstream.Answered(reply(), "test"));
    assertEquals(ask.getHeader().getID(), a.get().getHeader().getID());
    assertEquals(KEY.name(), b.get().getQuestion().getName());
  }

  @Test
  void aFailedQueryFailsItsAskersAndIsAskedAgainNextTime() {
    HeldUpstream upstream = new HeldUpstream();
    UpstreamResolver head = new UpstreamResolver(upstream, Runnable::run, SignatureKeys.choose(DnssecSettings.CryptoProvider.AUTO));
    Message ask = Message.newQuery(org.xbill.DNS.Record.newRecord(KEY.name(), KEY.type(), KEY.dclass()));
    CompletableFuture<Message> a = head.sendAsync(ask).toCompletableFuture();
    upstream.pending.get(0).complete(new Upstream.Failed("timeout"));
    assertTrue(a.isCompletedExceptionally());
    assertEquals(0, head.held());
    head.sendAsync(ask);
    assertEquals(2, upstream.asked.size());
  }

  @Test
  void aPinnedAnswerIsReusedAndDroppedOnceUnpinnedAndItsWindowHasPassed() throws Exception {
    HeldUpstream upstream = new HeldUpstream();
    UpstreamResolver head = new UpstreamResolver(upstream, Runnable::run, SignatureKeys.choose(DnssecSettings.CryptoProvider.AUTO));
    UpstreamResolver.Fetch pinned = head.pin(KEY);
    upstream.pending.get(0).complete(new Upstream.Answered(reply(), "test"));
    assertInstanceOf(Upstream.Answered.class, pinned.outcome.get());
    assertSame(pinned, head.pin(KEY), "joins the pinned answer");
    Message ask = Message.newQuery(org.xbill.DNS.Record.newRecord(KEY.name(), KEY.type(), KEY.dclass()));
    head.sendAsync(ask).toCompletableFuture().get();
    assertEquals(1, upstream.asked.size(), "the validator's own ask is answered from the pinned exchange");
    head.unpin(KEY, pinned);
    head.unpin(KEY, pinned);
    assertTrue(Await.until(Duration.ofSeconds(5), () -> head.held() == 0), "dropped after the reuse window");
  }

  @Test
  void anAnswerThatIsNotKeysIsDroppedOnceUnpinnedSoTheNextMissAsksAgain() throws Exception {
    HeldUpstream upstream = new HeldUpstream();
    UpstreamResolver head = new UpstreamResolver(upstream, Runnable::run, SignatureKeys.choose(DnssecSettings.CryptoProvider.AUTO));
    UpstreamResolver.Question www =
        new UpstreamResolver.Question(Name.fromConstantString("www.signed.test."), Type.A, DClass.IN);
    UpstreamResolver.Fetch pinned = head.pin(www);
    upstream.pending.get(0).complete(new Upstream.Answered(reply(), "test"));
    head.unpin(www, pinned);
    assertEquals(0, head.held(), "not kept: the answer cache is where answers are kept");
    head.pin(www);
    assertEquals(2, upstream.asked.size());
  }
}

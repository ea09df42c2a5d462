package io.shoal.dnssec;

import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.RRSIGRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;
import org.xbill.DNS.dnssec.R;

/**
 * Names expired (or not yet valid) DNSKEY signatures as such, where dnsjava 3.6 does not: when a
 * DS matches a DNSKEY but the DNSKEY RRset does not verify with it, dnsjava drops the verifier's
 * reason and says 6 "DNSSEC Bogus", "Keyset not secured by DNSKEY that matches DS", for the zone
 * and for every later answer from it. The commonest cause is a signer that stopped re-signing (or
 * a host clock that is off), which Unbound reports as 7 "Signature Expired". Here the zone's
 * DNSKEY RRset is fetched once more through the validator's head resolver (joining the fetch the
 * validation just made when it is still held) and, when every RRSIG over it is outside its
 * validity window now, the extended error becomes 7 or 8 with the same EXTRA-TEXT; when the
 * RRset came without any RRSIG (an upstream that strips them) it becomes 10 RRSIGs Missing, and
 * without any DNSKEY 9 DNSKEY Missing, as Unbound says.
 */
final class KeysetWindow {
  /** dnsjava's message keys: the failed keyset, and the chain failure that names its zone. */
  private static final String KEYSET_FAILED = "dnskey.ds_match_mismatch";
  private static final String BAD_KEY = "validate.bogus.badkey";
  private static final String NAME_MARK = "\u0001";
  private static final String REASON_MARK = "\u0002";

  private KeysetWindow() {}

  /**
   * {@code validated}, with its extended error changed to 7 or 8 when it is a DNSSEC Bogus
   * SERVFAIL for a keyset whose signatures are all outside their window at {@code clock}'s now.
   * Never fails: any trouble leaves {@code validated} as it was.
   */
  static CompletionStage<Message> refine(Message validated, UpstreamResolver head, Clock clock, Executor executor) {
    try {
      ExtendedErrorCodeOption why = ValidatingUpstream.extendedError(validated);
      if (validated.getRcode() != Rcode.SERVFAIL || why == null
          || why.getErrorCode() != ExtendedErrorCodeOption.DNSSEC_BOGUS || why.getText() == null
          || !why.getText().contains(R.get(KEYSET_FAILED))) {
        return CompletableFuture.completedFuture(validated);
      }
      Name zone = zoneOf(why.getText());
      if (zone == null) {
        return CompletableFuture.completedFuture(validated);
      }
      Message ask = Message.newQuery(Record.newRecord(zone, Type.DNSKEY, DClass.IN));
      return head.sendAsync(ask, executor).handle((keys, failure) -> {
        if (keys == null) {
          return validated;
        }
        List<RRSIGRecord> sigs = new ArrayList<>();
        boolean anyKey = false;
        for (Record r : keys.getSection(Section.ANSWER)) {
          anyKey |= r.getType() == Type.DNSKEY && r.getName().equals(zone);
          if (r instanceof RRSIGRecord sig && sig.getTypeCovered() == Type.DNSKEY && sig.getName().equals(zone)) {
            sigs.add(sig);
          }
        }
        // No keys at all, or keys without a signature (an upstream that strips RRSIGs): Unbound
        // says 9 DNSKEY Missing and 10 RRSIGs Missing, where dnsjava says 6 for both.
        int code = !anyKey ? ExtendedErrorCodeOption.DNSKEY_MISSING
            : sigs.isEmpty() ? ExtendedErrorCodeOption.RRSIGS_MISSING
            : SignatureWindow.refine(sigs, clock.instant(), why.getErrorCode());
        return code == why.getErrorCode() ? validated : withError(validated, new ExtendedErrorCodeOption(code, why.getText()));
      });
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(validated);
    }
  }

  /** The zone in dnsjava's "no chain of trust to keys for [zone]" text, or null. */
  static Name zoneOf(String text) {
    String pattern = R.get(BAD_KEY, NAME_MARK, REASON_MARK);
    int name = pattern.indexOf(NAME_MARK);
    int reason = pattern.indexOf(REASON_MARK);
    if (name < 0 || reason < name) {
      return null;
    }
    String before = pattern.substring(0, name);
    String between = pattern.substring(name + NAME_MARK.length(), reason);
    int start = text.indexOf(before);
    if (start < 0) {
      return null;
    }
    start += before.length();
    int end = text.indexOf(between, start);
    if (end <= start) {
      return null;
    }
    try {
      return Name.fromString(text.substring(start, end), Name.root);
    } catch (TextParseException e) {
      return null;
    }
  }

  private static Message withError(Message m, ExtendedErrorCodeOption ede) {
    OPTRecord old = m.getOPT();
    if (old == null) {
      return m;
    }
    List<EDNSOption> options = new ArrayList<>();
    options.add(ede);
    for (EDNSOption o : old.getOptions()) {
      if (!(o instanceof ExtendedErrorCodeOption)) {
        options.add(o);
      }
    }
    m.removeRecord(old, Section.ADDITIONAL);
    m.addRecord(new OPTRecord(old.getPayloadSize(), old.getExtendedRcode(), old.getVersion(), old.getFlags(), options),
        Section.ADDITIONAL);
    return m;
  }
}

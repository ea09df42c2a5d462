package io.shoal.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.routing.ConsistentHash;
import io.shoal.metrics.ServerMetrics;
import io.shoal.upstream.UpstreamSelector;
import io.shoal.wire.CacheKey;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Where the owner ring sends a key while a member is joining. */
class OwnerDirectoryTest {
  private static final String SELF = "akka://shoal@127.0.0.1:2551";
  private static final String OLD = "akka://shoal@127.0.0.1:2552";
  private static final String NEW = "akka://shoal@127.0.0.1:2553";
  private static final OwnerDirectory.Owner OLD_AT =
      new OwnerDirectory.Owner(new InetSocketAddress("127.0.0.1", 5302), new InetSocketAddress("127.0.0.1", 5302));
  private static final OwnerDirectory.Owner NEW_AT =
      new OwnerDirectory.Owner(new InetSocketAddress("127.0.0.1", 5303), new InetSocketAddress("127.0.0.1", 5303));

  private UpstreamSelector sockets;

  @BeforeEach
  void open() throws Exception {
    sockets = new UpstreamSelector(4, new ServerMetrics());
  }

  @AfterEach
  void close() {
    sockets.close();
  }

  private static CacheKey key(int i) {
    return CacheKey.of("n" + i + ".example.", 1, 1, 0);
  }

  @Test
  void aJoiningMembersKeysGoWhereTheyWereBeforeUntilItsDnsAddressIsKnown() {
    OwnerDirectory directory = new OwnerDirectory(sockets, null, null, Duration.ZERO, false);
    directory.update(List.of(SELF, OLD, NEW), Map.of(OLD, OLD_AT), SELF);
    ConsistentHash<String> all = ConsistentHash.create(List.of(SELF, OLD, NEW), 64);
    ConsistentHash<String> before = ConsistentHash.create(List.of(SELF, OLD), 64);
    int joiners = 0;
    for (int i = 0; i < 500; i++) {
      CacheKey k = key(i);
      if (!all.nodeFor(k.bytes()).equals(NEW)) {
        continue;
      }
      joiners++;
      String was = before.nodeFor(k.bytes());
      assertEquals(was.equals(SELF) ? null : OLD_AT, directory.ownerOf(k), "key " + i + " goes where it was");
    }
    assertTrue(joiners > 50, "the joining member owns some of 500 keys: " + joiners);
    assertTrue(directory.lists(NEW), "the ring lists the member before its address is known");
    assertEquals(2, directory.size(), "keys are looked up at two members");

    directory.update(List.of(SELF, OLD, NEW), Map.of(OLD, OLD_AT, NEW, NEW_AT), SELF);
    for (int i = 0; i < 500; i++) {
      CacheKey k = key(i);
      if (all.nodeFor(k.bytes()).equals(NEW)) {
        assertEquals(NEW_AT, directory.ownerOf(k), "key " + i + " goes to the member once it is known");
      }
    }
  }

  @Test
  void aNodeThatEnteredTheRingAsksPreviousOwnersUntilEveryTransferHasEnded() {
    OwnerDirectory directory = new OwnerDirectory(sockets, null, null, Duration.ofMinutes(10), false);
    directory.update(List.of(SELF, OLD, NEW), Map.of(OLD, OLD_AT, NEW, NEW_AT), SELF);
    ConsistentHash<String> all = ConsistentHash.create(List.of(SELF, OLD, NEW), 64);
    ConsistentHash<String> others = ConsistentHash.create(List.of(OLD, NEW), 64);
    CacheKey mine = null;
    CacheKey theirs = null;
    for (int i = 0; i < 500 && (mine == null || theirs == null); i++) {
      if (all.nodeFor(key(i).bytes()).equals(SELF)) {
        mine = mine == null ? key(i) : mine;
      } else {
        theirs = theirs == null ? key(i) : theirs;
      }
    }
    assertNotEquals(null, mine);
    assertEquals(others.nodeFor(mine.bytes()).equals(OLD) ? OLD_AT : NEW_AT, directory.previousOwnerOf(mine),
        "a key this node owns is asked of the member that owned it before");
    assertNull(directory.previousOwnerOf(theirs), "a key another member owns has no previous owner to ask here");

    assertFalse(directory.transferIn(OLD), "one member of two has ended its transfer");
    assertNotEquals(null, directory.previousOwnerOf(mine));
    assertTrue(directory.transferIn(NEW), "the last member's end closes the window");
    assertNull(directory.previousOwnerOf(mine), "with every transfer in, misses go upstream");
  }

  @Test
  void withNoWindowNoPreviousOwnerIsAsked() {
    OwnerDirectory directory = new OwnerDirectory(sockets, null, null, Duration.ZERO, false);
    directory.update(List.of(SELF, OLD), Map.of(OLD, OLD_AT), SELF);
    for (int i = 0; i < 100; i++) {
      assertNull(directory.previousOwnerOf(key(i)));
    }
  }
}

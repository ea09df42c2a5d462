package io.shoal.wire;

/** DNS response codes (RFC 1035 and RFC 6895) that shoal produces or labels in metrics. */
public final class Rcode {
  public static final int NOERROR = 0;
  public static final int FORMERR = 1;
  public static final int SERVFAIL = 2;
  public static final int NXDOMAIN = 3;
  public static final int NOTIMP = 4;
  public static final int REFUSED = 5;
  /** Extended rcode 16 (RFC 6891): the header carries 0, the OPT record the upper bits. */
  public static final int BADVERS = 16;

  private static final String[] NAMES = {
    "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
    "YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE"
  };

  private Rcode() {}

  /** The mnemonic of an rcode, or "RCODE<n>" for the unnamed ones. */
  public static String name(int rcode) {
    if (rcode == BADVERS) {
      return "BADVERS";
    }
    return rcode >= 0 && rcode < NAMES.length ? NAMES[rcode] : "RCODE" + rcode;
  }
}

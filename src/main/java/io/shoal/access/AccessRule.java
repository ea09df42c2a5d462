package io.shoal.access;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;

/** One {@code access_control} line: a client network and what to do with its queries. */
public record AccessRule(InetAddress network, int prefixLength, Action action) {

  /** What happens to a query from a matching client. */
  public enum Action {
    /** Answer it. */
    ALLOW,
    /** Answer REFUSED, with the question. */
    REFUSE,
    /** Drop it without an answer. */
    DENY;

    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * Parses {@code "NETWORK/LENGTH ACTION"}, e.g. {@code "10.0.0.0/8 allow"} or {@code "::1 allow"}
   * (a bare address is a host). Host bits set beside the prefix are an error: they usually mean
   * a typo in the length.
   *
   * @throws IllegalArgumentException with a message saying what is wrong
   */
  public static AccessRule parse(String text) {
    String[] parts = text.trim().split("\\s+");
    if (parts.length != 2) {
      throw new IllegalArgumentException(
          "'" + text + "' is not \"NETWORK/LENGTH ACTION\", e.g. \"10.0.0.0/8 allow\"");
    }
    Action action = null;
    for (Action a : Action.values()) {
      if (a.configName().equals(parts[1])) {
        action = a;
      }
    }
    if (action == null) {
      throw new IllegalArgumentException(
          "'" + parts[1] + "' in '" + text + "' is not an action; allowed actions: allow, refuse, deny");
    }
    String net = parts[0];
    int slash = net.indexOf('/');
    String host = slash < 0 ? net : net.substring(0, slash);
    if (!host.matches("[0-9a-fA-F:.]+") || !(host.contains(".") || host.contains(":"))) {
      throw new IllegalArgumentException("'" + host + "' in '" + text + "' is not an IPv4 or IPv6 address");
    }
    InetAddress address;
    try {
      // A literal only (checked above), so this never asks DNS.
      address = InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("'" + host + "' in '" + text + "' is not an IPv4 or IPv6 address");
    }
    int bits = address instanceof Inet4Address ? 32 : 128;
    int length = bits;
    if (slash >= 0) {
      try {
        length = Integer.parseInt(net.substring(slash + 1));
      } catch (NumberFormatException e) {
        length = -1;
      }
      if (length < 0 || length > bits) {
        throw new IllegalArgumentException(
            "prefix length in '" + text + "' must be between 0 and " + bits);
      }
    }
    byte[] b = address.getAddress();
    for (int i = length; i < bits; i++) {
      if ((b[i / 8] & (0x80 >>> (i % 8))) != 0) {
        throw new IllegalArgumentException(
            "'" + net + "' has bits set after the first " + length + "; did you mean a different length?");
      }
    }
    return new AccessRule(address, length, action);
  }

  @Override
  public String toString() {
    return network.getHostAddress() + "/" + prefixLength + " " + action.configName();
  }
}

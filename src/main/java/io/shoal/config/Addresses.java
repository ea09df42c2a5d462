package io.shoal.config;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Socket addresses as operators write them, and nameservers read from resolv.conf. */
public final class Addresses {
  private Addresses() {}

  /** Parses {@code host:port}, {@code [v6]:port}, a bare IPv4/IPv6 address, or a bare host. */
  public static InetSocketAddress parse(String text, int defaultPort, String key) {
    String host;
    int port = defaultPort;
    String t = text.trim();
    try {
      if (t.startsWith("[")) {
        int close = t.indexOf(']');
        if (close < 0) {
          throw new InvalidConfigException(key, "missing ']' in '" + text + "'");
        }
        host = t.substring(1, close);
        if (close + 1 < t.length()) {
          if (t.charAt(close + 1) != ':') {
            throw new InvalidConfigException(key, "expected ':port' after ']' in '" + text + "'");
          }
          port = Integer.parseInt(t.substring(close + 2));
        }
      } else if (t.indexOf(':') >= 0 && t.indexOf(':') == t.lastIndexOf(':')) {
        host = t.substring(0, t.indexOf(':'));
        port = Integer.parseInt(t.substring(t.indexOf(':') + 1));
      } else {
        host = t;
      }
    } catch (NumberFormatException e) {
      throw new InvalidConfigException(key, "bad port in '" + text + "'; expected host:port");
    }
    if (host.isEmpty()) {
      throw new InvalidConfigException(key, "no host in '" + text + "'; expected host:port");
    }
    if (port < 0 || port > 65535) {
      throw new InvalidConfigException(key, "port " + port + " out of range 0-65535");
    }
    try {
      return new InetSocketAddress(InetAddress.getByName(host), port);
    } catch (UnknownHostException e) {
      throw new InvalidConfigException(key, "cannot resolve host '" + host + "'");
    }
  }

  /** The {@code nameserver} lines of a resolv.conf file, port 53. */
  public static List<InetSocketAddress> fromResolvConf(Path file, String key) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (IOException e) {
      throw new InvalidConfigException(
          key, "\"resolv.conf\" given but " + file + " cannot be read: " + e.getMessage());
    }
    List<InetSocketAddress> servers = new ArrayList<>();
    for (String line : lines) {
      String[] parts = line.trim().split("\\s+");
      if (parts.length >= 2 && parts[0].equals("nameserver")) {
        String addr = parts[1];
        int zone = addr.indexOf('%');
        if (zone >= 0) {
          addr = addr.substring(0, zone);
        }
        servers.add(parse(addr.contains(":") ? "[" + addr + "]" : addr, 53, key));
      }
    }
    if (servers.isEmpty()) {
      throw new InvalidConfigException(
          key, "\"resolv.conf\" given but " + file + " has no nameserver lines; list servers as \"host:port\"");
    }
    return servers;
  }
}

package io.shoal.ingress;

import java.net.InetSocketAddress;

/** A reply ready for the wire, and the client it goes back to. */
public record Reply(byte[] wire, InetSocketAddress client) {}

#!/usr/bin/env python3
"""What a DoH server sends back per answer on one HTTP/2 connection: frames by type, the size and
make-up of each response's header block (HPACK: fields sent as an index into the tables, literals
added to the dynamic table, literals not indexed), TLS records, and the socket reads it took
(one request at a time, so each read that returns after a wait is one write the server flushed).

  bench/profile/doh_frames.py PORT [--queries 200] [--name nas.home.arpa] [--host dns.test]

The client is minimal and plain: ALPN h2, the connection preface and an empty SETTINGS, then one
GET /dns-query?dns=... at a time on streams 1, 3, 5, ..., each waited for (END_STREAM) before the
next; the server's certificate is not checked. Prints totals and per-answer means over the last
QUERIES - 1 answers (the first carries the connection's own SETTINGS and the tables' first use).
"""
import argparse
import base64
import collections
import random
import socket
import ssl
import struct

TYPES = {0: "DATA", 1: "HEADERS", 2: "PRIORITY", 3: "RST_STREAM", 4: "SETTINGS", 5: "PUSH_PROMISE", 6: "PING",
         7: "GOAWAY", 8: "WINDOW_UPDATE", 9: "CONTINUATION"}


def dns_query(name):
    qname = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
    return struct.pack(">HHHHHH", 0, 0x0100, 1, 0, 0, 0) + qname + struct.pack(">HH", 1, 1)


def literal(name, value):
    """HPACK literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    out = b"\x00"
    for s in (name.encode(), value.encode()):
        assert len(s) < 127
        out += bytes([len(s)]) + s
    return out


def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def integer(block, i, prefix):
    mask = (1 << prefix) - 1
    value = block[i] & mask
    i += 1
    if value == mask:
        shift = 0
        while True:
            b = block[i]
            i += 1
            value += (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
    return value, i


def hpack_kinds(block):
    """Counts of the header block's representations (RFC 7541 section 6)."""
    kinds = collections.Counter()
    i = 0
    while i < len(block):
        b = block[i]
        if b & 0x80:
            _, i = integer(block, i, 7)
            kinds["indexed"] += 1
            continue
        if b & 0xE0 == 0x20:
            _, i = integer(block, i, 5)
            kinds["table_size_update"] += 1
            continue
        if b & 0xC0 == 0x40:
            index, i = integer(block, i, 6)
            kinds["literal_indexed"] += 1
        else:
            index, i = integer(block, i, 4)
            kinds["literal_not_indexed"] += 1
        if index == 0:
            n, i = integer(block, i, 7)
            i += n
        n, i = integer(block, i, 7)
        i += n
    return kinds


class Connection:
    def __init__(self, port, host):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["h2"])
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname=host)
        self.plain = b""
        self.raw = b""  # raw bytes not yet split into TLS records
        self.reads = self.records = 0
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                self.read_socket()
        self.flush()
        assert self.tls.selected_alpn_protocol() == "h2", self.tls.selected_alpn_protocol()

    def flush(self):
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def read_socket(self):
        data = self.sock.recv(65536)
        if not data:
            raise IOError("closed")
        self.reads += 1
        self.raw += data
        while len(self.raw) >= 5:
            n = struct.unpack(">H", self.raw[3:5])[0]
            if len(self.raw) < 5 + n:
                break
            self.records += 1
            self.raw = self.raw[5 + n:]
        self.incoming.write(data)

    def send(self, data):
        self.tls.write(data)
        self.flush()

    def frame(self):
        while True:
            if len(self.plain) >= 9:
                n = struct.unpack(">I", b"\0" + self.plain[:3])[0]
                if len(self.plain) >= 9 + n:
                    f = self.plain[:9 + n]
                    self.plain = self.plain[9 + n:]
                    return f[3], f[4], struct.unpack(">I", f[5:9])[0] & 0x7FFFFFFF, f[9:]
            try:
                self.plain += self.tls.read(65536)
                continue
            except ssl.SSLWantReadError:
                pass
            self.read_socket()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("port", type=int)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--name", default="nas.home.arpa")
    ap.add_argument("--host", default="dns.test")
    a = ap.parse_args()
    c = Connection(a.port, a.host)
    c.send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    dns = base64.urlsafe_b64encode(dns_query(a.name)).rstrip(b"=").decode()
    totals = collections.Counter()
    for q in range(a.queries):
        stream = 1 + 2 * q
        block = (literal(":method", "GET") + literal(":scheme", "https") + literal(":authority", a.host)
                 + literal(":path", "/dns-query?dns=" + dns) + literal("accept", "application/dns-message"))
        reads0, records0 = c.reads, c.records
        c.send(frame(1, 0x5, stream, block))  # END_STREAM | END_HEADERS
        seen = collections.Counter()
        while True:
            kind, flags, sid, payload = c.frame()
            seen["frames"] += 1
            seen["frame " + TYPES.get(kind, str(kind))] += 1
            if kind == 4 and not flags & 1:
                c.send(frame(4, 1, 0, b""))  # ACK the server's SETTINGS
            if kind == 6 and not flags & 1:
                c.send(frame(6, 1, 0, payload))
            if kind == 1 and sid == stream:
                seen["header block bytes"] += len(payload)
                for k, v in hpack_kinds(payload).items():
                    seen["hpack " + k] += v
            if kind == 0 and sid == stream:
                seen["data bytes"] += len(payload)
                if payload:
                    # keep the windows open as a client would
                    inc = struct.pack(">I", len(payload))
                    c.send(frame(8, 0, 0, inc) + frame(8, 0, stream, inc))
            if kind == 7:
                raise IOError("GOAWAY")
            if sid == stream and flags & 1 and kind in (0, 1):
                break
        seen["socket reads"] += c.reads - reads0
        seen["TLS records"] += c.records - records0
        if q == 0:
            print("first answer: " + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())))
        else:
            totals.update(seen)
    n = a.queries - 1
    print(f"per answer, mean over answers 2..{a.queries}:")
    for k in sorted(totals):
        print(f"  {k}: {totals[k] / n:.2f}")


if __name__ == "__main__":
    main()

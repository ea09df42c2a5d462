#!/usr/bin/env python3
"""A query on a new connection (TCP, DoT), and encrypted CPU per query: shoal beside Unbound.

Modes (--modes, comma separated; all three by default), the servers taking turns, ROUNDS rounds:

  tcp       a new TCP connection per query: connect, send one query for a local name (answered by
            the server itself, no upstream), read the answer, close; N connections per server and
            round, latency from connect() to the last byte of the answer. shoal and Unbound.
  dot       a new DNS-over-TLS connection per query: a full TLS 1.3 handshake (no resumption), then
            one query; two times per connection, the handshake (connect() until it is done) and the
            first answer after it (query sent until the last byte of the answer). shoal with
            shoal.tls.provider = auto (Conscrypt), shoal with jdk, Unbound (tls-service-key/pem).
            With --load-seconds S > 0 each round then loads each server with dnsperf for S seconds
            over DoT (-m dot) and DoH (-m doh, HTTP/2 GET, Unbound's https-port) on a few
            long-lived connections and records the server's CPU per answered query.
  upstream  shoal forwarding to a DoT upstream (Unbound's TLS port, answering a local zone): dnsperf
            sends S seconds of distinct names over UDP, so every query is a cache miss that goes
            out on shoal's long-lived TLS connection to Unbound; shoal's CPU per answered query,
            with its DoT upstream connections made by Conscrypt (provider auto) and by the JDK's
            (DNSSEC validation off: the zone is Unbound's unsigned local data).

The certificate is a self-signed ECDSA P-256 one (RSA 2048 with --key rsa), made here with
openssl, for every server. CPU is utime + stime from /proc/PID/stat over the dnsperf run divided by
the queries dnsperf saw answered. Writes rounds.csv (latency percentiles per mode, server and
round), load.csv (queries per second and CPU per query per server, mode and round), the servers'
logs, and prints the medians over rounds with their spread (min-max).

usage: bench/tcp_connect/connect.py SHOAL_JAR OUT_DIR [--modes tcp,dot,upstream] [--rounds 5]
           [--connections 300] [--key ec|rsa] [--load-seconds 10] [--load-clients 4]
"""
import argparse
import csv
import os
import random
import signal
import socket
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
import time

NAME = "nas.home.arpa"
UPSTREAM_ZONE = "up.test"
DOT_SERVERS = ("shoal-conscrypt", "shoal-jdk", "unbound")
TCP_SERVERS = ("shoal-conscrypt", "unbound")
FORWARDERS = (("fwd-conscrypt", "auto"), ("fwd-jdk", "jdk"))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(qid):
    header = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    qname = b"".join(bytes([len(p)]) + p.encode() for p in NAME.split(".")) + b"\0"
    return header + qname + struct.pack(">HH", 1, 1)


def read_exactly(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise IOError("closed before the whole answer")
        data += chunk
    return data


def ask_once(port, context=None):
    """(handshake ms or None, answer ms) of one new connection; TLS when a context is given."""
    qid = random.randint(0, 0xFFFF)
    m = query(qid)
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        if context is None:
            s, t1 = raw, t0
            handshake = None
        else:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s = context.wrap_socket(raw, server_hostname="dns.test")
            t1 = time.perf_counter()
            handshake = (t1 - t0) * 1000.0
        try:
            s.sendall(struct.pack(">H", len(m)) + m)
            length = struct.unpack(">H", read_exactly(s, 2))[0]
            answer = read_exactly(s, length)
            t2 = time.perf_counter()
        finally:
            if s is not raw:
                s.close()
    if struct.unpack(">H", answer[:2])[0] != qid or answer[3] & 0x0F != 0:
        raise IOError("not a NOERROR answer to the query")
    return handshake, (t2 - t1) * 1000.0


def wait_until(check, proc, what, limit=180):
    deadline = time.time() + limit
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{what}: server exited with {proc.returncode} before answering")
        try:
            check()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"{what}: no answer within {limit} s")


def udp_answers(port, name):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2)
        qname = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
        s.sendto(struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + qname + struct.pack(">HH", 1, 1), ("127.0.0.1", port))
        reply = s.recv(4096)
        if reply[3] & 0x0F != 0:
            raise IOError(f"rcode {reply[3] & 0x0F} for {name}")


def percentile(sorted_ms, q):
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dnsperf_cpu(mode, port, pid, seconds, clients, queries, once=False):
    """(queries answered per second, server CPU microseconds per answered query) of one dnsperf run."""
    cmd = ["dnsperf", "-m", mode, "-s", "127.0.0.1", "-p", str(port), "-d", queries, "-c", str(clients),
           "-l", str(seconds)]
    if mode == "doh":
        cmd += ["-O", f"doh-uri=https://127.0.0.1:{port}/dns-query"]
    if once:
        cmd += ["-n", "1"]
    before = cpu_seconds(pid)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60).stdout
    used = cpu_seconds(pid) - before
    answered = qps = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Queries completed:"):
            answered = int(line.split()[2])
        elif line.startswith("Queries per second:"):
            qps = float(line.split()[3])
    if not answered:
        raise IOError(f"dnsperf -m {mode} on port {port} saw no answers:\n{out}")
    return qps, used * 1e6 / answered


def start_shoal(jar, out, name, provider, props):
    metrics_port = free_port()
    cmd = ["java", f"-Dshoal.tls.provider={provider}", f"-Dshoal.metrics.prometheus.port={metrics_port}",
           "-Dshoal.admin.enabled=off", f"-Dshoal.local.records.0={NAME}. A 192.168.1.10"]
    cmd += [f"-D{k}={v}" for k, v in props.items()]
    return subprocess.Popen(cmd + ["-jar", jar, "serve"], stdout=open(os.path.join(out, f"{name}.log"), "w"),
                            stderr=subprocess.STDOUT)


def summarise(rows, key_cols, value_cols):
    keys = []
    for r in rows:
        k = tuple(r[c] for c in key_cols)
        if k not in keys:
            keys.append(k)
    for k in keys:
        mine = [r for r in rows if tuple(r[c] for c in key_cols) == k]
        for col in value_cols:
            values = [r[col] for r in mine if r.get(col) not in (None, "")]
            if values:
                print(f"{' '.join(map(str, k))} {col}: median {statistics.median(values)} "
                      f"(spread {min(values)}-{max(values)})")


def write_fields(rows):
    fields = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    return fields


def write_csv(path, rows):
    fields = write_fields(rows)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jar")
    ap.add_argument("out")
    ap.add_argument("--modes", default="tcp,dot,upstream")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=300)
    ap.add_argument("--key", choices=("ec", "rsa"), default="ec")
    ap.add_argument("--load-seconds", type=int, default=10)
    ap.add_argument("--load-clients", type=int, default=4)
    a = ap.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    if not modes or any(m not in ("tcp", "dot", "upstream") for m in modes):
        sys.exit(f"--modes: tcp, dot, upstream (comma separated), not {a.modes}")
    if "upstream" in modes and a.load_seconds <= 0:
        sys.exit("--modes upstream needs --load-seconds > 0")
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="connect-")
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    newkey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"] if a.key == "ec" else ["-newkey", "rsa:2048"]
    subprocess.run(["openssl", "req", "-x509", *newkey, "-nodes", "-days", "2", "-subj", "/CN=dns.test",
                    "-addext", "subjectAltName=DNS:dns.test", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cert)
    queries = os.path.join(work, "queries.txt")
    with open(queries, "w") as f:
        f.write(f"{NAME} A\n")

    unbound_tcp, unbound_tls, unbound_https = free_port(), free_port(), free_port()
    conf = os.path.join(work, "unbound.conf")
    with open(conf, "w") as f:
        f.write(f"""server:
  interface: 127.0.0.1@{unbound_tcp}
  interface: 127.0.0.1@{unbound_tls}
  interface: 127.0.0.1@{unbound_https}
  tls-port: {unbound_tls}
  https-port: {unbound_https}
  tls-service-key: "{key}"
  tls-service-pem: "{cert}"
  do-daemonize: no
  username: ""
  chroot: ""
  use-syslog: no
  pidfile: ""
  module-config: "iterator"
  num-threads: 1
  local-zone: "home.arpa." static
  local-data: "{NAME}. A 192.168.1.10"
  local-zone: "{UPSTREAM_ZONE}." redirect
  local-data: "{UPSTREAM_ZONE}. 3600 A 192.0.2.1"
""")
    procs, tcp, dot, doh, udp = {}, {}, {}, {}, {}
    procs["unbound"] = subprocess.Popen(["unbound", "-d", "-c", conf], stdout=subprocess.DEVNULL,
                                        stderr=open(os.path.join(a.out, "unbound.log"), "w"))
    tcp["unbound"], dot["unbound"], doh["unbound"] = unbound_tcp, unbound_tls, unbound_https
    if "tcp" in modes or "dot" in modes:
        for name, provider in (("shoal-conscrypt", "auto"), ("shoal-jdk", "jdk")):
            tcp[name], dot[name], doh[name] = free_port(), free_port(), free_port()
            procs[name] = start_shoal(a.jar, a.out, name, provider, {
                "shoal.listen.udp": f"127.0.0.1:{tcp[name]}", "shoal.listen.tcp": f"127.0.0.1:{tcp[name]}",
                "shoal.listen.tls": f"127.0.0.1:{dot[name]}", "shoal.listen.https": f"127.0.0.1:{doh[name]}",
                "shoal.tls.certificate": cert, "shoal.tls.private_key": key})
    if "upstream" in modes:
        for name, provider in FORWARDERS:
            udp[name] = free_port()
            procs[name] = start_shoal(a.jar, a.out, name, provider, {
                "shoal.listen.udp": f"127.0.0.1:{udp[name]}", "shoal.listen.tcp": f"127.0.0.1:{udp[name]}",
                "shoal.upstreams.default.servers.0": f"tls://127.0.0.1:{unbound_tls}#dns.test",
                "shoal.upstreams.default.tls_ca_file": cert,
                # the zone is Unbound's local data, unsigned and under no delegation a validator could follow
                "shoal.dnssec.validation": "off"})

    rows, loads = [], []
    try:
        wait_until(lambda: ask_once(dot["unbound"], context), procs["unbound"], "unbound")
        for name in procs:
            if name in dot:
                wait_until(lambda: ask_once(dot[name], context), procs[name], name)
            if name in udp:
                wait_until(lambda: udp_answers(udp[name], f"warm.{UPSTREAM_ZONE}"), procs[name], name)
        # warm-up: the JIT, the servers' first connections, the forwarders' first misses
        for _ in range(a.connections):
            for name in TCP_SERVERS if "tcp" in modes else ():
                ask_once(tcp[name])
            for name in DOT_SERVERS if "dot" in modes else ():
                ask_once(dot[name], context)
        names = os.path.join(work, "names.txt")

        def distinct_names(label):
            with open(names, "w") as f:
                for i in range(400_000):
                    f.write(f"{label}-{i}.{UPSTREAM_ZONE} A\n")
            return names
        for name in udp:
            dnsperf_cpu("udp", udp[name], procs[name].pid, 5, a.load_clients, distinct_names(f"warm-{name}"), once=True)
        if a.load_seconds > 0 and "dot" in modes:
            for name in DOT_SERVERS:  # the JIT of the DoT and DoH paths, before the first measured load
                for mode, port in (("dot", dot[name]), ("doh", doh.get(name))):
                    if port is not None:
                        dnsperf_cpu(mode, port, procs[name].pid, 5, a.load_clients, queries)
        with open("/proc/loadavg") as f:
            print(f"load average at start: {f.read().split()[0]}")

        for r in range(1, a.rounds + 1):
            for mode in [m for m in ("tcp", "dot") if m in modes]:
                for name in TCP_SERVERS if mode == "tcp" else DOT_SERVERS:
                    times = [ask_once(tcp[name] if mode == "tcp" else dot[name], None if mode == "tcp" else context)
                             for _ in range(a.connections)]
                    ans = sorted(t[1] for t in times)
                    row = {"mode": mode, "server": name, "round": r, "connections": len(times)}
                    if mode == "dot":
                        hs = sorted(t[0] for t in times)
                        for q in (50, 90, 99):
                            row[f"handshake_p{q}_ms"] = round(percentile(hs, q / 100), 3)
                    for q in (50, 90, 99):
                        row[f"answer_p{q}_ms"] = round(percentile(ans, q / 100), 3)
                    rows.append(row)
                    print(f"round {r}/{a.rounds} {mode} {name}: "
                          + ", ".join(f"{k} {v}" for k, v in row.items() if k.endswith("_ms")), flush=True)
            if a.load_seconds > 0 and "dot" in modes:
                for name in DOT_SERVERS:
                    for mode, port in (("dot", dot[name]), ("doh", doh.get(name))):
                        if port is None:
                            continue
                        qps, us = dnsperf_cpu(mode, port, procs[name].pid, a.load_seconds, a.load_clients, queries)
                        loads.append({"server": name, "mode": mode, "round": r, "qps": round(qps),
                                      "cpu_us_per_query": round(us, 1)})
                        print(f"round {r}/{a.rounds} {name} {mode} load: {qps:.0f} q/s, {us:.1f} CPU us per query",
                              flush=True)
            if "upstream" in modes:
                for name in udp:
                    qps, us = dnsperf_cpu("udp", udp[name], procs[name].pid, a.load_seconds, a.load_clients,
                                          distinct_names(f"r{r}-{name}"), once=True)
                    loads.append({"server": name, "mode": "miss-over-dot-upstream", "round": r, "qps": round(qps),
                                  "cpu_us_per_query": round(us, 1)})
                    print(f"round {r}/{a.rounds} {name} misses over its DoT upstream: {qps:.0f} q/s, "
                          f"{us:.1f} CPU us per query", flush=True)
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    if rows:
        write_csv(os.path.join(a.out, "rounds.csv"), rows)
        summarise(rows, ("mode", "server"), [c for c in write_fields(rows) if c.endswith("_ms")])
    if loads:
        write_csv(os.path.join(a.out, "load.csv"), loads)
        summarise(loads, ("server", "mode"), ("qps", "cpu_us_per_query"))


if __name__ == "__main__":
    main()

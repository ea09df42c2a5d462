#!/usr/bin/env python3
"""A new DNS-over-TLS connection, shoal (Conscrypt and JDK TLS) beside Unbound on the same host.

Each client connection does a full TLS handshake (no session resumption), then sends one query for
a local name (answered by the server itself, no upstream) and reads the answer, then closes: what a
stub that opens a DoT connection per query, or a forwarder after an idle timeout, pays. Three
servers take turns, ROUNDS rounds of N connections each: shoal with shoal.tls.provider = auto
(Conscrypt), shoal with provider = jdk, and Unbound with tls-service-key/pem. Per connection two
times: the handshake (connect() until the handshake is done) and the first answer after it (query
sent until the last byte of the answer). The certificate is a self-signed ECDSA P-256 one (or RSA
2048 with --key rsa), made here with openssl. Writes rounds.csv (one row per server and round) and
prints the medians over rounds with their spread (min-max).

With --load-seconds S (default 10; 0: skip), each round then also loads each server with dnsperf
for S seconds over DoT (-m dot; shoal also over DoH, -m doh, GET), on a few long-lived connections,
the same local name, and writes the server's CPU time per answered query (utime + stime from
/proc/PID/stat over the dnsperf run, divided by the queries dnsperf saw answered) to load.csv.

usage: bench/tcp_connect/dot.py SHOAL_JAR OUT_DIR [--rounds 5] [--connections 300] [--key ec|rsa]
                                [--load-seconds 10] [--load-clients 4]
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
SERVERS = ("shoal-conscrypt", "shoal-jdk", "unbound")


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


def ask_once(port, context):
    """(handshake ms, first answer ms) of one new connection."""
    qid = random.randint(0, 0xFFFF)
    m = query(qid)
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with context.wrap_socket(raw, server_hostname="dns.test") as s:
            t1 = time.perf_counter()
            s.sendall(struct.pack(">H", len(m)) + m)
            length = struct.unpack(">H", read_exactly(s, 2))[0]
            answer = read_exactly(s, length)
            t2 = time.perf_counter()
    if struct.unpack(">H", answer[:2])[0] != qid or answer[3] & 0x0F != 0:
        raise IOError("not a NOERROR answer to the query")
    return (t1 - t0) * 1000.0, (t2 - t1) * 1000.0


def wait_answering(port, context, proc, limit=60):
    deadline = time.time() + limit
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited with {proc.returncode} before answering")
        try:
            ask_once(port, context)
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"no answer on port {port} within {limit} s")


def percentile(sorted_ms, q):
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dnsperf_cpu(mode, port, pid, seconds, clients, queries):
    """(queries answered per second, server CPU microseconds per answered query) of one dnsperf run."""
    cmd = ["dnsperf", "-m", mode, "-s", "127.0.0.1", "-p", str(port), "-d", queries, "-c", str(clients),
           "-l", str(seconds)]
    if mode == "doh":
        cmd += ["-O", f"doh-uri=https://127.0.0.1:{port}/dns-query"]
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


def shoal(jar, out, name, provider, cert, key):
    port, https_port, metrics_port = free_port(), free_port(), free_port()
    proc = subprocess.Popen(["java", f"-Dshoal.listen.udp=127.0.0.1:{free_port()}",
                             f"-Dshoal.listen.tcp=127.0.0.1:{free_port()}",
                             f"-Dshoal.listen.tls=127.0.0.1:{port}",
                             f"-Dshoal.listen.https=127.0.0.1:{https_port}",
                             f"-Dshoal.tls.certificate={cert}", f"-Dshoal.tls.private_key={key}",
                             f"-Dshoal.tls.provider={provider}",
                             f"-Dshoal.metrics.prometheus.port={metrics_port}", "-Dshoal.admin.enabled=off",
                             f"-Dshoal.local.records.0={NAME}. A 192.168.1.10",
                             "-jar", jar, "serve"],
                            stdout=open(os.path.join(out, f"{name}.log"), "w"), stderr=subprocess.STDOUT)
    return proc, port, https_port


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jar")
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=300)
    ap.add_argument("--key", choices=("ec", "rsa"), default="ec")
    ap.add_argument("--load-seconds", type=int, default=10)
    ap.add_argument("--load-clients", type=int, default=4)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="dot-connect-")
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    newkey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"] if a.key == "ec" else ["-newkey", "rsa:2048"]
    subprocess.run(["openssl", "req", "-x509", *newkey, "-nodes", "-days", "2", "-subj", "/CN=dns.test",
                    "-addext", "subjectAltName=DNS:dns.test", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cert)
    unbound_port = free_port()
    conf = os.path.join(work, "unbound.conf")
    with open(conf, "w") as f:
        f.write(f"""server:
  interface: 127.0.0.1@{unbound_port}
  tls-port: {unbound_port}
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
""")
    queries = os.path.join(work, "queries.txt")
    with open(queries, "w") as f:
        f.write(f"{NAME} A\n")
    procs, ports, https = {}, {}, {}
    for name, provider in (("shoal-conscrypt", "auto"), ("shoal-jdk", "jdk")):
        procs[name], ports[name], https[name] = shoal(a.jar, a.out, name, provider, cert, key)
    procs["unbound"] = subprocess.Popen(["unbound", "-d", "-c", conf], stdout=subprocess.DEVNULL,
                                        stderr=open(os.path.join(a.out, "unbound.log"), "w"))
    ports["unbound"] = unbound_port
    rows, loads = [], []
    try:
        for name in SERVERS:
            wait_answering(ports[name], context, procs[name])
            for _ in range(a.connections):  # warm-up: the JIT, the server's first connections
                ask_once(ports[name], context)
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        print(f"load average at start: {load}")
        for r in range(1, a.rounds + 1):
            for name in SERVERS:
                times = [ask_once(ports[name], context) for _ in range(a.connections)]
                hs = sorted(t[0] for t in times)
                ans = sorted(t[1] for t in times)
                row = {"server": name, "round": r, "connections": len(times),
                       "handshake_p50_ms": round(percentile(hs, 0.50), 3),
                       "handshake_p90_ms": round(percentile(hs, 0.90), 3),
                       "handshake_p99_ms": round(percentile(hs, 0.99), 3),
                       "answer_p50_ms": round(percentile(ans, 0.50), 3),
                       "answer_p90_ms": round(percentile(ans, 0.90), 3),
                       "answer_p99_ms": round(percentile(ans, 0.99), 3)}
                rows.append(row)
                print(f"round {r}/{a.rounds} {name}: handshake p50 {row['handshake_p50_ms']} ms "
                      f"p99 {row['handshake_p99_ms']} ms; answer p50 {row['answer_p50_ms']} ms "
                      f"p99 {row['answer_p99_ms']} ms", flush=True)
            if a.load_seconds <= 0:
                continue
            for name in SERVERS:
                for mode, port in (("dot", ports[name]), ("doh", https.get(name))):
                    if port is None:
                        continue
                    qps, us = dnsperf_cpu(mode, port, procs[name].pid, a.load_seconds, a.load_clients, queries)
                    loads.append({"server": name, "mode": mode, "round": r, "qps": round(qps), "cpu_us_per_query": round(us, 1)})
                    print(f"round {r}/{a.rounds} {name} {mode} load: {qps:.0f} q/s, {us:.1f} CPU us per query", flush=True)
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    with open(os.path.join(a.out, "rounds.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    if loads:
        with open(os.path.join(a.out, "load.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(loads[0].keys()))
            w.writeheader()
            w.writerows(loads)
    for name in SERVERS:
        for mode in ("dot", "doh"):
            mine = [r for r in loads if r["server"] == name and r["mode"] == mode]
            for col in ("qps", "cpu_us_per_query"):
                values = [r[col] for r in mine]
                if values:
                    print(f"{name} {mode} {col}: median {statistics.median(values)} (spread {min(values)}-{max(values)})")
    for name in SERVERS:
        mine = [r for r in rows if r["server"] == name]
        for col in [c for c in rows[0] if c.endswith("_ms")]:
            values = [r[col] for r in mine]
            print(f"{name} {col}: median {statistics.median(values)} (spread {min(values)}-{max(values)})")


if __name__ == "__main__":
    main()

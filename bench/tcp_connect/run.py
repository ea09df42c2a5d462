#!/usr/bin/env python3
"""A query on a new TCP connection, shoal beside Unbound on the same host.

Each client query opens a connection, sends one query for a local name (answered by the server
itself, so no upstream is involved), reads the answer and closes: what a stub or forwarder that
opens a connection per query, or a client retrying over TCP after TC=1, pays. The two servers take
turns, ROUNDS rounds of N connections each; the latency is from connect() to the last byte of the
answer. Writes rounds.csv (one row per server and round) and prints the medians over rounds with
their spread (min-max).

usage: bench/tcp_connect/run.py SHOAL_JAR OUT_DIR [--rounds 5] [--connections 300]
"""
import argparse
import csv
import os
import random
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

NAME = "nas.home.arpa"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(qid):
    header = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    qname = b"".join(bytes([len(p)]) + p.encode() for p in NAME.split(".")) + b"\0"
    return header + qname + struct.pack(">HH", 1, 1)


def ask_once(port):
    m = query(random.randint(0, 0xFFFF))
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(struct.pack(">H", len(m)) + m)
        head = b""
        while len(head) < 2:
            chunk = s.recv(2 - len(head))
            if not chunk:
                raise IOError("closed before the answer")
            head += chunk
        length = struct.unpack(">H", head)[0]
        body = b""
        while len(body) < length:
            chunk = s.recv(length - len(body))
            if not chunk:
                raise IOError("closed mid-answer")
            body += chunk
    return (time.perf_counter() - t0) * 1000.0


def wait_answering(port, proc, limit=60):
    deadline = time.time() + limit
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited with {proc.returncode} before answering")
        try:
            ask_once(port)
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"no answer on port {port} within {limit} s")


def percentile(sorted_ms, q):
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jar")
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=300)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tcp-connect-")
    shoal_port, unbound_port, metrics_port = free_port(), free_port(), free_port()
    conf = os.path.join(work, "unbound.conf")
    with open(conf, "w") as f:
        f.write(f"""server:
  interface: 127.0.0.1@{unbound_port}
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
    procs = {
        "unbound": subprocess.Popen(["unbound", "-d", "-c", conf], stdout=subprocess.DEVNULL,
                                    stderr=open(os.path.join(a.out, "unbound.log"), "w")),
        "shoal": subprocess.Popen(["java", f"-Dshoal.listen.udp=127.0.0.1:{shoal_port}",
                                   f"-Dshoal.listen.tcp=127.0.0.1:{shoal_port}",
                                   f"-Dshoal.metrics.prometheus.port={metrics_port}",
                                   f"-Dshoal.local.records.0={NAME}. A 192.168.1.10",
                                   "-jar", a.jar, "serve"],
                                  stdout=open(os.path.join(a.out, "shoal.log"), "w"), stderr=subprocess.STDOUT),
    }
    ports = {"unbound": unbound_port, "shoal": shoal_port}
    rows = []
    try:
        for name, proc in procs.items():
            wait_answering(ports[name], proc)
            for _ in range(a.connections):  # warm-up: the JIT, the server's first connections
                ask_once(ports[name])
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        print(f"load average at start: {load}")
        for r in range(1, a.rounds + 1):
            for name in ("shoal", "unbound"):
                ms = sorted(ask_once(ports[name]) for _ in range(a.connections))
                row = {"server": name, "round": r, "connections": len(ms),
                       "p50_ms": round(percentile(ms, 0.50), 3), "p90_ms": round(percentile(ms, 0.90), 3),
                       "p99_ms": round(percentile(ms, 0.99), 3), "max_ms": round(ms[-1], 3)}
                rows.append(row)
                print(f"round {r}/{a.rounds} {name}: p50 {row['p50_ms']} ms, p90 {row['p90_ms']} ms, "
                      f"p99 {row['p99_ms']} ms", flush=True)
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
    for name in ("shoal", "unbound"):
        mine = [r for r in rows if r["server"] == name]
        for col in ("p50_ms", "p90_ms", "p99_ms"):
            values = [r[col] for r in mine]
            print(f"{name} {col}: median {statistics.median(values)} (spread {min(values)}-{max(values)})")


if __name__ == "__main__":
    main()

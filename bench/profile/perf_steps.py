#!/usr/bin/env python3
"""Folds the samples of `perf record -g -p PID` of a shoal JVM into the steps of a cache hit, in
shares of all the process's samples (kernel time included, which JFR does not see).

  java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer -jar shoal.jar serve ...
  perf record -F 499 -g -p PID -o hit.data -- sleep 12     # under warm-hit load
  (stop the JVM: it writes /tmp/perf-PID.map, which perf needs to name JIT frames)
  bench/profile/perf_steps.py hit.data

A sample goes to the first step any frame of its stack matches, in the order of RULES (JIT
frames are named after the outermost method of an inlined chain, so a step's share includes
what the compiler inlined into it)."""
import sys, subprocess, collections
data = sys.argv[1]
out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,ip,sym"], capture_output=True, text=True).stdout
cats = collections.Counter(); threads = collections.Counter(); n = 0
RULES = [  # first match wins, checked over the whole stack (leaf first)
  ("page faults (first touch of heap pages)", ("exc_page_fault", "clear_page")),
  ("receive: recvfrom + JDK receive", ("__libc_recvfrom", "DatagramChannelImpl.receive", "sourceSocketAddress", "NativeSocketAddress")),
  ("reply: sendto + JDK send", ("__libc_sendto", "DatagramChannelImpl.send", "UdpSocket.send")),
  ("wait when empty: epoll/selector", ("epoll_wait", "SelectorImpl", "EPollSelector")),
  ("parse + cache key", ("DnsQuery.parse", "CacheKey")),
  ("cache look-up", ("AnswerCache.get", "ProfileTable.match")),
  ("render: copy, ID, TTLs", ("AnswerRenderer", "CachedAnswer.render")),
  ("metrics", ("kamon", "ServerMetrics", "CacheMetrics", "LongAdder")),
  ("ingress checks (access, policy, prefetch)", ("Ingress.offer", "AccessControl", "Prefetch", "ResponseRateLimiter")),
  ("stream hops (Akka interpreter)", ("akka.stream", "DatagramSource", "UdpSocket.answer", "UdpSocket.receive")),
]
for block in out.split("\n\n"):
    lines = block.strip().split("\n")
    if not lines or not lines[0].strip(): continue
    stack = " | ".join(lines)
    n += 1
    if "C2 Compiler" in lines[0] or "C1 Compiler" in lines[0]: c = "JIT compiler threads"
    elif "G1 " in lines[0] or "GC Thread" in lines[0] or "VM Thread" in lines[0]: c = "GC / VM threads"
    # perf keeps 15 characters of a thread's name: "shoal-udp-reade"
    elif "udp-reade" not in lines[0] and "shoal-shoal-udp" not in lines[0]: c = "other threads: " + lines[0].strip()[:18]
    else:
        c = next((name for name, keys in RULES if any(k in stack for k in keys)), "other on reader thread")
    cats[c] += 1
for c, k in cats.most_common():
    print(f"{100*k/n:5.1f}%  {c}")
print(f"samples: {n}")

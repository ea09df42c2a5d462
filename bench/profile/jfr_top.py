#!/usr/bin/env python3
"""Aggregates a JFR recording (settings=profile) of a shoal node: execution samples by thread,
top frames (self) and inclusive shares of the query path's methods, allocation sample weight by
class and allocating frame, and bytes allocated per thread (jdk.ThreadAllocationStatistics).

  bench/profile/jfr_top.py FILE.jfr [THREAD-SUBSTRING]      (e.g. udp-reader)

Divide the reader threads' allocated bytes by the queries answered during the recording for
bytes per query."""
import subprocess, sys, re, collections
f = sys.argv[1]
tfilter = sys.argv[2] if len(sys.argv) > 2 else None

def events(kind):
    out = subprocess.run(["jfr", "print", "--stack-depth", "64", "--events", kind, f], capture_output=True, text=True).stdout
    for block in out.split("\n" + kind + " {")[1:]:
        yield block

def frames(block):
    m = re.search(r"stackTrace = \[(.*?)\n\s*\]", block, re.S)
    if not m: return []
    fr = []
    for line in m.group(1).split("\n"):
        line = line.strip()
        if not line or line == "...": continue
        line = re.sub(r"\s+line:.*$", "", line)
        line = re.sub(r"\(.*\)$", "", line)
        fr.append(line)
    return fr

def thread(block):
    m = re.search(r'(?:sampledThread|eventThread|\bthread) = "([^"]*)"', block)
    return m.group(1) if m else "?"

selfc = collections.Counter(); incl = collections.Counter(); threads = collections.Counter(); n = 0
for b in events("jdk.ExecutionSample"):
    t = thread(b); threads[t] += 1
    if tfilter and tfilter not in t: continue
    fr = frames(b)
    if not fr: continue
    n += 1
    selfc[fr[0]] += 1
    for x in set(fr): incl[x] += 1
print("execution samples by thread:")
for t, c in threads.most_common(15): print(f"  {c:6d} {t}")
print(f"\nsamples counted: {n}\nTop self frames:")
for k, c in selfc.most_common(40): print(f"  {100*c/n:5.1f}% {k}")
print("\nInclusive (shoal + selected):")
for k, c in incl.most_common(400):
    if any(s in k for s in ("io.shoal", "DatagramChannelImpl.receive", "DatagramChannelImpl.send", "kamon", "akka.stream.impl.fusing.GraphInterpreter.execute", "Selector", "select")):
        print(f"  {100*c/n:5.1f}% {k}")
alloc = collections.Counter(); allocTop = collections.Counter(); total = 0
for b in events("jdk.ObjectAllocationSample"):
    if tfilter and tfilter not in thread(b): continue
    m = re.search(r"weight = ([\d.]+) (\w+)", b)
    if not m: continue
    w = float(m.group(1)) * {"bytes":1, "kB":1024, "MB":1024**2, "GB":1024**3}.get(m.group(2), 1)
    cls = re.search(r"objectClass = (\S+)", b).group(1)
    fr = frames(b)
    site = next((x for x in fr if "io.shoal" in x), fr[0] if fr else "?")
    alloc[(cls, fr[0] if fr else "?", site)] += w; total += w
print(f"\nAllocation weight sampled: {total/1024**2:.1f} MB")
for (cls, top, site), w in alloc.most_common(25):
    print(f"  {100*w/total:5.1f}% {w/1024**2:8.1f} MB {cls}  at {top}  <- {site}")

first, last = {}, {}
for b in events("jdk.ThreadAllocationStatistics"):
    t = thread(b)
    m = re.search(r"allocated = ([\d.]+) (\w+)", b)
    if not m: continue
    v = float(m.group(1)) * {"bytes":1, "kB":1024, "MB":1024**2, "GB":1024**3}.get(m.group(2), 1)
    first.setdefault(t, v); last[t] = v
print("\nAllocated during the recording, by thread:")
for t in sorted(last, key=lambda t: first[t] - last[t]):
    if last[t] - first[t] >= 1024**2:
        print(f"  {(last[t]-first[t])/1024**2:9.1f} MB  {t}")

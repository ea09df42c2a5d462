#!/usr/bin/env python3
"""Sampled CPU per answered query from async-profiler's collapsed stacks (one file per node,
recorded with `start,event=cpu,interval=1000000,threads`, so one sample is 1 ms of CPU and each
stack starts with its thread): by thread, by top frame (self) and inclusive.

  bench/profile/collapsed_per_query.py QUERIES FILE[.gz] [FILE ...]

QUERIES is the number of queries answered by those nodes while they were sampled (the member's
QPS times the seconds sampled); the figures are microseconds per query."""
import collections, gzip, re, sys

queries = float(sys.argv[1])
threads, self_, inclusive = collections.Counter(), collections.Counter(), collections.Counter()
total = 0
for name in sys.argv[2:]:
    with (gzip.open if name.endswith(".gz") else open)(name, "rt") as f:
        for line in f:
            stack, n = line.rsplit(" ", 1)
            n = int(n)
            frames = stack.split(";")
            # "[shoal-udp-reader-0 tid=123]" -> "shoal-udp-reader-N": one row per kind of thread
            threads[re.sub(r"-\d+\b", "-N", re.sub(r"\s*tid=\d+", "", frames[0]))] += n
            self_[frames[-1]] += n
            for frame in set(frames[1:]):
                inclusive[frame] += n
            total += n

def show(title, counter, rows):
    print(f"== {title}")
    for key, n in counter.most_common(rows):
        print(f"{n / queries * 1000:8.2f}  {key[:150]}")

print(f"{total} samples, {total / queries * 1000:.2f} us per query")
show("threads", threads, 20)
show("self", self_, 30)
show("inclusive", inclusive, 40)

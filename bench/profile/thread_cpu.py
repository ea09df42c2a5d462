#!/usr/bin/env python3
"""CPU of each thread of a running process over an interval, from /proc (user + system time), in
milliseconds of CPU per second, threads of the same name (numbers dropped) summed: what an idle
node spends in the background, or where a paced node's quota goes.

  bench/profile/thread_cpu.py PID [SECONDS]

SECONDS defaults to 30. Prints one line per thread group, largest first, and the total."""
import collections, os, re, sys, time

pid = int(sys.argv[1])
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
tick = os.sysconf("SC_CLK_TCK")


def snapshot():
    cpu = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        # the name in stat is in parentheses and may hold spaces: count fields after it
        fields = stat[stat.rindex(")") + 2:].split()
        cpu[tid] = (name, int(fields[11]) + int(fields[12]))
    return cpu


before = snapshot()
time.sleep(seconds)
after = snapshot()
groups = collections.Counter()
for tid, (name, ticks) in after.items():
    spent = ticks - before.get(tid, (name, 0))[1]
    groups[re.sub(r"[-_ ]?\d+$", "", name)] += spent
total = sum(groups.values())
for name, ticks in groups.most_common():
    if ticks > 0:
        print(f"{ticks * 1000 / tick / seconds:8.1f} ms/s  {name}")
print(f"{total * 1000 / tick / seconds:8.1f} ms/s  total over {seconds:.0f} s")

#!/usr/bin/env python3
"""The JIT compiler threads' share of a shoal member's CPU in one phase of a study run, per round,
from the run's raw files (the /proc readings the study takes right around each phase):

  bench/profile/compiler_share.py RUN_DIR [MEMBER] [PHASE]

RUN_DIR is a study run directory with raw.tar.xz unpacked in it (tar -xJf raw.tar.xz); MEMBER
defaults to shoal, PHASE to cold (the recursion study's phases are cold and warm). Prints, per
round, the process's clock ticks over the phase, the compiler threads' part (HotSpot's "C1
CompilerThread" and "C2 CompilerThread"), and the CPU per answer with and without them, answers
taken from the run's rounds.csv."""
import csv, glob, os, re, sys

run = sys.argv[1]
member = sys.argv[2] if len(sys.argv) > 2 else "shoal"
phase = sys.argv[3] if len(sys.argv) > 3 else "cold"
tick_us = 1e6 / int(open(os.path.join(run, "clk_tck.txt")).read().split()[0])


def ticks(path):
    """(the process's utime + stime, its compiler threads' utime + stime) from one reading."""
    total = compiler = 0
    for line in open(path):
        m = re.match(r"^(\d+)(?: thread (\d+))?: \d+ \((.*?)\) (.*)$", line.strip())
        if not m:
            continue
        f = m.group(4).split()
        t = int(f[11]) + int(f[12])
        if m.group(2) is None:
            total += t
        elif m.group(3).startswith(("C1 CompilerThre", "C2 CompilerThre")):
            compiler += t
    return total, compiler


answered = {}
with open(os.path.join(run, "rounds.csv")) as f:
    for row in csv.DictReader(f):
        if row["member"] == member and row["phase"] == phase:
            answered[row["round"]] = int(row["answered"])

for d in sorted(glob.glob(os.path.join(run, "members", member, "round-*"))):
    n = os.path.basename(d).split("-")[1]
    before = ticks(os.path.join(d, f"cpu-before-{phase}.txt"))
    after = ticks(os.path.join(d, f"cpu-after-{phase}.txt"))
    total, compiler = after[0] - before[0], after[1] - before[1]
    a = answered.get(n, 0)
    per = lambda t: f"{t * tick_us / a:.0f} us" if a else "?"
    print(f"round {n}: {total} ticks, compiler {compiler} ({100 * compiler / max(total, 1):.0f}%); "
          f"per answer {per(total)}, without the compiler {per(total - compiler)}")

#!/usr/bin/env python3
"""Resident memory of one JVM by what holds it.

    bench/footprint/resident.py NMT_DETAIL SMAPS

NMT_DETAIL is `jcmd PID VM.native_memory detail` of a JVM started with
-XX:NativeMemoryTracking=detail, SMAPS a copy of /proc/PID/smaps taken at the same moment. Each
mapping's resident size (smaps' Rss) goes to the NMT category whose reserved region it lies in
(Java Heap, Metaspace, Code, Thread Stack, GC, Shared class space ...); a file mapping NMT does not
know goes under its file's name (libjvm.so: the JVM's own code), and anonymous memory NMT does not
know under "C heap": glibc's arenas, which hold what NMT counts as malloc (symbols, the JIT's
arenas, NMT's own records) plus the arenas' slack. NMT's committed figures say what was asked of
the OS; these say what is in RAM."""
import collections
import re
import sys


def regions(nmt_path):
    found = []
    for line in open(nmt_path):
        m = re.match(r'\[(0x[0-9a-f]+) - (0x[0-9a-f]+)\] reserved \d+KB for (.+?) from', line.strip())
        if m:
            found.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    return sorted(found)


def category(found, lo, hi, name):
    for a, b, what in found:
        if a < hi and lo < b:
            return what
    if name.startswith('/'):
        return 'file ' + name.rsplit('/', 1)[-1].replace(' (deleted)', '')
    return 'C heap' if name in ('', '[heap]') else 'anonymous ' + name


def main(nmt_path, smaps_path):
    found = regions(nmt_path)
    resident = collections.Counter()
    current = None
    for line in open(smaps_path):
        m = re.match(r'([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$', line)
        if m:
            current = category(found, int(m.group(1), 16), int(m.group(2), 16), m.group(3).strip())
            continue
        m = re.match(r'Rss:\s+(\d+) kB', line)
        if m and current:
            resident[current] += int(m.group(1))
    total = sum(resident.values())
    print('resident MiB  what')
    shown = 0
    for what, kib in resident.most_common():
        if kib >= 512:
            print(f'{kib / 1024:12.1f}  {what}')
            shown += kib
    print(f'{(total - shown) / 1024:12.1f}  the rest (each under 0.5 MiB)')
    print(f'{total / 1024:12.1f}  total')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

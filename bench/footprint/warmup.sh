#!/usr/bin/env bash
# How fast does a fresh node reach its rate? QPS second by second from the first answer, under
# the warm-hit load, for JVM option sets side by side (e.g. the shipped tiered JIT against C2 only).
#
#   bench/footprint/warmup.sh JAR OUT_DIR ROUNDS 'NAME=[JVM OPTION ...]' ...
#
# Each member is JAR started by this repository's bin/shoal (its shipped JVM options, plus the
# member's in JDK_JAVA_OPTIONS) on the shipped configuration with only the addresses changed (as
# bench/footprint/idle.sh: an upstream Unbound serving 2,048 names of bench.test). Each round
# starts each member afresh, in turn, waits for its first answer (dig every 0.1 s, 60 s at most)
# and runs dnsperf -c 8 -q 200 -T 1 over the 2,048 names for 30 s with a reading every second.
# OUT_DIR/warmup.csv has round,member,second,qps; OUT_DIR/summary.txt, per member, the median
# over rounds of the first 5 s's queries and of the rate from second 11 on. Needs unbound,
# dnsperf and dig; stops only what it started. About 40 s a member and round.
set -euo pipefail
if [[ $# -lt 4 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
jar=$(realpath "$1"); mkdir -p "$2"; out=$(realpath "$2"); rounds=$3; shift 3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/scratch.sh
source "$here/../lib/scratch.sh"
# shellcheck source=../lib/cached_names.sh
source "$here/../lib/cached_names.sh"
shoal_tree tree "$jar"

echo "round,member,second,qps" > "$out/warmup.csv"
for r in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    name=${spec%%=*}; opts=${spec#*=}
    extra=(); [[ -n $opts ]] && extra=("JDK_JAVA_OPTIONS=$opts")
    env "${extra[@]}" tree/bin/shoal serve --config shoal.conf > "shoal-$name.log" 2>&1 &
    pid=$!; pids+=($pid)
    answered=no
    for _ in $(seq 1 600); do
      if answers "$sh_port"; then
        answered=yes; break
      fi
      sleep 0.1
    done
    [[ $answered == yes ]] || { echo "warmup: $name does not answer" >&2; cat "shoal-$name.log" >&2; exit 1; }
    dnsperf -s 127.0.0.1 -p "$sh_port" -d queries.txt -c 8 -q 200 -T 1 -l 30 -S 1 > "dnsperf-$name-$r.txt" 2>&1 || true
    awk -v m="$name" -v r="$r" '/^[0-9]+\.[0-9]+: [0-9.]+$/ { n++; print r "," m "," n "," $2 }' \
      "dnsperf-$name-$r.txt" >> "$out/warmup.csv"
    echo "warmup: round $r, $name: $(awk -F, -v m="$name" -v r="$r" '$1 == r && $2 == m && $3 <= 5 { s += $4 } END { printf "%.0f", s }' "$out/warmup.csv") queries in its first 5 s" >&2
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done

python3 - "$out/warmup.csv" > "$out/summary.txt" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("member              first 5 s, queries: median (min-max)     QPS from second 11: median of rounds (min-max)")
for m in dict.fromkeys(r["member"] for r in rows):
    first, rate = [], []
    for rnd in dict.fromkeys(r["round"] for r in rows):
        q = [float(r["qps"]) for r in rows if r["member"] == m and r["round"] == rnd]
        first.append(sum(q[:5])); rate.append(statistics.median(q[10:]))
    print(f"{m:<19} {statistics.median(first):9.0f} ({min(first):.0f}-{max(first):.0f})"
          f"          {statistics.median(rate):8.0f} ({min(rate):.0f}-{max(rate):.0f})")
PY
cat "$out/summary.txt"

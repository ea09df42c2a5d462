#!/usr/bin/env bash
# Does a change cost a warm hit? Two builds of shoal, one after the other, on the same load.
#
#   bench/ab/hits.sh BEFORE_JAR AFTER_JAR OUT_DIR [ROUNDS]
#
# Each member is a shoal.jar on the shipped configuration (only the addresses changed: the DNS
# port, an upstream Unbound on 127.0.0.1 serving 2,048 names of bench.test as local data, the
# metrics and admin endpoints on ports the OS picks; DNSSEC validation off, the upstream being
# unsigned), with G1 and the heap bin/shoal sizes. Each round starts each member afresh, in turn
# (before, after; ROUNDS rounds, default 5), warms it for 10 s with the load below and then
# measures 15 s of warm hits: dnsperf -c 8 -q 200 -T 1 over the 2,048 names, the member's CPU from
# /proc/PID/stat per completed query. OUT_DIR/hits.csv has a row per member and round, and
# OUT_DIR/summary.txt the medians, their spread and after/before per round. HITS_BEFORE_OPTS and
# HITS_AFTER_OPTS add JVM options to one member (e.g. a class-data archive). Needs unbound,
# dnsperf and dig; stops only what it started. About a minute per member and round.
set -euo pipefail
if [[ $# -lt 3 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
declare -A jars=([before]=$(realpath "$1") [after]=$(realpath "$2"))
mkdir -p "$3"; out=$(realpath "$3"); rounds=${4:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/scratch.sh
source "$here/../lib/scratch.sh"

# shellcheck source=../lib/cached_names.sh
source "$here/../lib/cached_names.sh"
# G1 and the heap bin/shoal derives from the configuration, with its -Xms8m and young-generation cap.
opts="-XX:+UseG1GC -XX:+ExitOnOutOfMemoryError $(java -jar "${jars[before]}" config --java-heap --config shoal.conf) -Xms8m -XX:MaxNewSize=64m"

printf 'before: %s\nafter: %s\n' "$opts ${HITS_BEFORE_OPTS:-}" "$opts ${HITS_AFTER_OPTS:-}" > "$out/options.txt"
tck=$(getconf CLK_TCK)
echo "round,member,qps,completed,cpu_us_per_query" > "$out/hits.csv"
for r in $(seq 1 "$rounds"); do
  for m in before after; do
    # shellcheck disable=SC2086
    extra=HITS_${m^^}_OPTS
    java $opts ${!extra:-} -jar "${jars[$m]}" serve --config shoal.conf > "shoal-$m.log" 2>&1 & pid=$!; pids+=($pid)
    for _ in $(seq 1 240); do
      answers "$sh_port" && break
      sleep 0.5
    done
    dnsperf -s 127.0.0.1 -p "$sh_port" -d queries.txt -c 8 -q 200 -T 1 -l 10 > /dev/null 2>&1
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    result=$(dnsperf -s 127.0.0.1 -p "$sh_port" -d queries.txt -c 8 -q 200 -T 1 -l 15 2>&1)
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    q=$(awk '/Queries completed/ {print $3}' <<< "$result")
    qps=$(awk '/Queries per second/ {printf "%.0f", $4}' <<< "$result")
    cpu=$(awk -v c=$((u1 - u0 + s1 - s0)) -v q="$q" -v t="$tck" 'BEGIN { printf "%.3f", c * 1e6 / t / q }')
    echo "$r,$m,$qps,$q,$cpu" >> "$out/hits.csv"
    echo "hits: round $r/$rounds $m: $qps QPS at $cpu us per query" >&2
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
python3 - "$out" > "$out/summary.txt" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/hits.csv")))
by = {m: [r for r in rows if r["member"] == m] for m in ("before", "after")}
for m, rs in by.items():
    cpu = [float(r["cpu_us_per_query"]) for r in rs]; qps = [float(r["qps"]) for r in rs]
    print(f"{m}: CPU per hit {statistics.median(cpu):.2f} us ({min(cpu):.2f}-{max(cpu):.2f}), "
          f"QPS {statistics.median(qps):.0f} ({min(qps):.0f}-{max(qps):.0f})")
ratios = [float(a["cpu_us_per_query"]) / float(b["cpu_us_per_query"]) for b, a in zip(by["before"], by["after"])]
print("after/before CPU per hit, per round: median %.2fx (%s)" % (statistics.median(ratios), ", ".join(f"{x:.2f}x" for x in ratios)))
PY
cat "$out/summary.txt"

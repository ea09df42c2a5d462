#!/usr/bin/env bash
# What an idle node holds, and what the JVM options that shrink it cost a warm hit.
#
#   bench/footprint/footprint.sh SHOAL_JAR OUT_DIR [ROUNDS]
#
# Two members, each the shipped configuration (only the addresses changed: the DNS port, an
# upstream Unbound on 127.0.0.1 serving 2,048 names of bench.test as local data, the metrics and
# admin endpoints on ports the OS picks; DNSSEC validation off, as the upstream is unsigned):
#   before  the JVM options bin/shoal passed before: G1, -Xmx from `shoal config --java-heap`,
#           -Xms64m -XX:MaxNewSize=64m
#   after   the options bin/shoal passes now: the same with -Xms8m, the heap given back down to
#           30% free (-XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30) by a concurrent cycle on a
#           node with no collection for 30 s (-XX:G1PeriodicGCInterval=30000), and the C heap
#           trimmed every 30 s (-XX:TrimNativeHeapInterval=30000)
# Each round starts each member afresh, in turn (before, after; ROUNDS rounds, default 3), and:
#   1. waits until it answers, asks 20 names twice, waits 45 s, and reads VmRSS, RssAnon, RssFile
#      and Threads from /proc/PID/status and the committed heap from `jcmd PID GC.heap_info`
#      (idle_rss_kib ...);
#   2. warms 8 s and then measures 12 s of warm hits, dnsperf -c 8 -q 200 -T 1 over the 2,048
#      names, CPU from /proc/PID/stat per completed query (cpu_us_per_query);
#   3. waits 45 s more and reads VmRSS again (after_load_rss_kib): what an idle node keeps of a
#      busy spell.
# Then one start of each member with -XX:NativeMemoryTracking=summary (which itself takes about
# 5 MiB) gives the JVM's own accounting after step 1: nmt_<member>.txt and the rows of nmt.csv.
# OUT_DIR/footprint.csv has a row per member and round. FOOTPRINT_LOAD=no leaves steps 2 and 3
# out (no load: the idle figures alone, which need no quiet host). Needs unbound, dnsperf, dig and jcmd;
# stops only what it started. About 3 minutes a member and round, plus 3 minutes.
set -euo pipefail
if [[ $# -lt 2 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
jar=$(realpath "$1"); mkdir -p "$2"; out=$(realpath "$2"); rounds=${3:-3}; settle=${FOOTPRINT_SETTLE:-45}
load=${FOOTPRINT_LOAD:-yes}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/scratch.sh
source "$here/../lib/scratch.sh"

# shellcheck source=../lib/cached_names.sh
source "$here/../lib/cached_names.sh"

heap=$(java -jar "$jar" config --java-heap --config shoal.conf)
common="-XX:+UseG1GC -XX:+ExitOnOutOfMemoryError $heap"
declare -A opts=(
  [before]="$common -Xms64m -XX:MaxNewSize=64m"
  [after]="$common -Xms8m -XX:MaxNewSize=64m -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30 -XX:G1PeriodicGCInterval=30000 -XX:TrimNativeHeapInterval=30000"
)
members=(before after)
for m in "${members[@]}"; do echo "$m: ${opts[$m]}"; done > options.txt
cp options.txt "$out/options.txt"

start() { # MEMBER [EXTRA JVM OPTION]: starts it, waits up to 120 s for an answer; sets $pid
  # shellcheck disable=SC2086
  java ${opts[$1]} ${2:-} -jar "$jar" serve --config shoal.conf > "shoal-$1.log" 2>&1 & pid=$!; pids+=($pid)
  for _ in $(seq 1 240); do
    answers "$sh_port" && return 0
    sleep 0.5
  done
  echo "footprint: $1 does not answer" >&2; cat "shoal-$1.log" >&2; return 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; }
ask_a_few() { for _ in 1 2; do for i in $(seq 0 19); do dig +time=2 +tries=1 @127.0.0.1 -p "$sh_port" "n$i.bench.test" A +short > /dev/null; done; done; }
status() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
heap_kib() { jcmd "$1" GC.heap_info | awk '/garbage-first heap/ { sub(/K,/, "", $4); print $4 }'; }

tck=$(getconf CLK_TCK)
exec 3> "$out/footprint.csv"
echo "round,member,idle_rss_kib,idle_rss_anon_kib,idle_rss_file_kib,threads,heap_committed_kib,qps,completed,noerror_pct,cpu_us_per_query,after_load_rss_kib" >&3
for r in $(seq 1 "$rounds"); do
  for m in "${members[@]}"; do
    start "$m"; ask_a_few; sleep "$settle"
    idle="$(status $pid VmRSS),$(status $pid RssAnon),$(status $pid RssFile),$(status $pid Threads),$(heap_kib $pid)"
    if [[ $load == no ]]; then
      echo "$r,$m,$idle,,,,," >&3
      echo "footprint: round $r/$rounds $m: idle ${idle%%,*} KiB" >&2
      stop; continue
    fi
    dnsperf -s 127.0.0.1 -p "$sh_port" -d queries.txt -c 8 -q 200 -T 1 -l 8 > /dev/null 2>&1
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    result=$(dnsperf -s 127.0.0.1 -p "$sh_port" -d queries.txt -c 8 -q 200 -T 1 -l 12 2>&1)
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    q=$(awk '/Queries completed/ {print $3}' <<< "$result")
    qps=$(awk '/Queries per second/ {printf "%.0f", $4}' <<< "$result")
    ok=$(awk '/NOERROR/ {for (i = 1; i <= NF; i++) if ($i == "NOERROR") { v = $(i + 2); gsub(/[(%)]/, "", v); print v }}' <<< "$result")
    cpu=$(awk -v c=$((u1 - u0 + s1 - s0)) -v q="$q" -v t="$tck" 'BEGIN { printf "%.3f", c * 1e6 / t / q }')
    sleep "$settle"
    echo "$r,$m,$idle,$qps,$q,${ok:-0},$cpu,$(status $pid VmRSS)" >&3
    echo "footprint: round $r/$rounds $m: idle ${idle%%,*} KiB, $qps QPS at $cpu us per query, $(status $pid VmRSS) KiB after" >&2
    stop
  done
done
exec 3>&-

echo "member,area,committed_kib" > "$out/nmt.csv"
for m in "${members[@]}"; do
  start "$m" -XX:NativeMemoryTracking=summary; ask_a_few; sleep "$settle"
  jcmd "$pid" VM.native_memory summary > "$out/nmt_$m.txt"
  echo "VmRSS $(status $pid VmRSS) kB, Threads $(status $pid Threads)" >> "$out/nmt_$m.txt"
  sed -n 's/^-  *\(.*\) (reserved=[0-9]*KB, committed=\([0-9]*\)KB.*/\1,\2/p' "$out/nmt_$m.txt" | sed "s/^/$m,/" >> "$out/nmt.csv"
  stop
done
echo "footprint: $out/footprint.csv and $out/nmt.csv" >&2

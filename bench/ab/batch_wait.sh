#!/usr/bin/env bash
# What does listen.udp_batch_wait cost and save at one paced load? One shoal.jar, restarted for
# each wait given, on the shipped configuration (only the addresses changed, as bench/ab/hits.sh):
#
#   bench/ab/batch_wait.sh SHOAL_JAR QPS WAIT...        e.g. bench/ab/batch_wait.sh target/shoal.jar 20000 0 250us 500us
#
# For each WAIT the node is started with -Dshoal.listen.udp_batch_wait=WAIT, warmed for 8 s with
# dnsperf -c 8 -q 200 -T 1 unpaced, then offered QPS queries a second (-Q) for 10 s of warm hits.
# Prints a line per wait: queries completed, dnsperf's mean latency, the node's CPU per query
# from /proc/PID/stat over the paced run, and shoal_udp_reads_total and shoal_udp_received_total
# over the node's life (warm-up included). One round per wait: a quick look for choosing a
# value, not a published figure. Needs unbound, dnsperf, dig and curl; stops only what it started.
set -uo pipefail
if [[ $# -lt 3 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
jar=$(realpath "$1"); rate=$2; shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/scratch.sh
source "$here/../lib/scratch.sh"
# shellcheck source=../lib/cached_names.sh
source "$here/../lib/cached_names.sh"
tck=$(getconf CLK_TCK)
metric() { curl -s "127.0.0.1:$1/metrics" | awk -v n="$2" '$1 ~ "^" n { s += $2 } END { print s + 0 }'; }
for w in "$@"; do
  java -Xms256m -Xmx256m -Dshoal.listen.udp_batch_wait="$w" -jar "$jar" serve --config shoal.conf > shoal.log 2>&1 & pid=$!; pids+=($pid)
  for _ in $(seq 1 120); do
    answers "$sh_port" && break
    sleep 0.5
  done
  dnsperf -s 127.0.0.1 -p "$sh_port" -d queries.txt -c 8 -q 200 -T 1 -l 8 > /dev/null 2>&1
  read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  result=$(dnsperf -s 127.0.0.1 -p "$sh_port" -d queries.txt -c 8 -q 200 -T 1 -l 10 -Q "$rate" 2>&1)
  read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  q=$(awk '/Queries completed/ {print $3}' <<< "$result")
  lat=$(awk '/Average Latency/ {print $4}' <<< "$result")
  mport=$(grep -o "metrics at http://127.0.0.1:[0-9]*" shoal.log | head -1 | grep -o "[0-9]*$")
  cpu=$(awk -v c=$((u1 - u0 + s1 - s0)) -v q="$q" -v t="$tck" 'BEGIN { printf "%.2f", c * 1e6 / t / q }')
  echo "wait=$w completed=$q avg_latency_s=$lat cpu_us_per_q=$cpu reads=$(metric "$mport" shoal_udp_reads_total) received=$(metric "$mport" shoal_udp_received_total)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done

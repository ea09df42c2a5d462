#!/usr/bin/env bash
# The JVM's floor for a warm hit, beside Unbound and shoal in one run.
#
#   bench/floor/floor.sh SHOAL_JAR OUT_DIR [ROUNDS] [SECONDS] [NAMES]
#
# Three servers answer the same NAMES names of bench.test (default 2048; dnsperf asks them in order,
# over and over) over UDP on 127.0.0.1, each server measured in turn, ROUNDS times (default 5), SECONDS each (default 15),
# with dnsperf -c 8 -q 200 -T 1:
#   unbound  Unbound with one thread, answering from its cache (forwarding bench.test to an
#            upstream Unbound that serves the names as local data; the upstream is not measured)
#   shoal    shoal with one UDP socket (one reading thread, as Unbound has one), its memory cache,
#            the same upstream
#   floor    BareUdpLoop.java: one blocking DatagramChannel echoing each query back as an answer
# Every server is warmed for 20 s first. OUT_DIR/floor.csv has, for each measured run, the QPS,
# the share answered NOERROR, the process's user and system CPU (from /proc/PID/stat) per
# completed query, and its CPU per query against Unbound's in the same round; OUT_DIR/floor.png
# charts it. Progress goes to stderr. Needs unbound, dnsperf and dig; stops only what it started.
# About 2 minutes plus 45 s a round.
set -euo pipefail
if [[ $# -lt 2 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
jar=$(realpath "$1"); mkdir -p "$2"; out=$(realpath "$2"); rounds=${3:-5}; seconds=${4:-15}; names=${5:-2048}
if ! [[ $names =~ ^[0-9]+$ ]] || (( names < 1 || names > 2048 )); then
  echo "floor: NAMES must be 1 to 2048 (the cache holds 4,096 answers), not '$names'" >&2; exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/scratch.sh
source "$here/../lib/scratch.sh"

free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
up_port=$(free_port); ub_port=$(free_port); sh_port=$(free_port); fl_port=$(free_port)

for i in $(seq 0 $((names - 1))); do echo "  local-data: \"n$i.bench.test. 3600 A 192.0.2.1\""; done > names.conf
unbound_conf() { # PORT, then the lines that make this Unbound what it is
  local port=$1; shift
  printf '%s\n' "server:" "  interface: 127.0.0.1@$port" "  do-ip6: no" '  username: ""' '  chroot: ""' \
    '  pidfile: ""' "  use-syslog: no" '  logfile: ""' "  num-threads: 1" '  local-zone: "test." nodefault' "$@" \
    "remote-control:" "  control-enable: no"
}
unbound_conf "$up_port" '  local-zone: "bench.test." static' "  include: \"$work/names.conf\"" > upstream.conf
unbound_conf "$ub_port" '  module-config: "iterator"' "  do-not-query-localhost: no" "  qname-minimisation: no" \
  "  prefetch: no" "  msg-cache-size: 1056768" "  rrset-cache-size: 1015808" \
  "forward-zone:" '  name: "bench.test."' "  forward-addr: 127.0.0.1@$up_port" > unbound.conf
cat > shoal.conf <<CONF
shoal {
  listen { udp = "127.0.0.1:$sh_port", tcp = "127.0.0.1:$sh_port", udp_sockets = 1 }
  upstreams.default.servers = ["127.0.0.1:$up_port"]
  caches.answers { max_entries = 4096, when_full = evict_one }
  dnssec.validation = off
  admin.port = 0
  metrics.prometheus.port = 0
}
CONF
awk -v n="$names" 'BEGIN { for (r = 0; r < 2048000 / n; r++) for (i = 0; i < n; i++) print "n" i ".bench.test A" }' > queries.txt

unbound -d -c upstream.conf > upstream.log 2>&1 & pids+=($!)
unbound -d -c unbound.conf > unbound.log 2>&1 & ub_pid=$!; pids+=($ub_pid)
java -Xms1g -Xmx1g -jar "$jar" serve --config shoal.conf > shoal.log 2>&1 & sh_pid=$!; pids+=($sh_pid)
java -Xms1g -Xmx1g "$here/BareUdpLoop.java" "$fl_port" > floor.log 2>&1 & fl_pid=$!; pids+=($fl_pid)

answers() { # PORT: waits up to 60 s for an answer
  for _ in $(seq 1 120); do
    dig +time=1 +tries=1 @127.0.0.1 -p "$1" n0.bench.test A +short 2>/dev/null | grep -q 192.0.2.1 && return 0
    sleep 0.5
  done
  echo "floor: nothing answers on port $1" >&2; return 1
}
answers "$ub_port"; answers "$sh_port"; answers "$fl_port"

tck=$(getconf CLK_TCK)
load() { dnsperf -s 127.0.0.1 -p "$1" -d queries.txt -c 8 -q 200 -T 1 -l "$2" 2>&1; }
for m in unbound:$ub_port shoal:$sh_port floor:$fl_port; do
  echo "floor: warming ${m%%:*} for 20 s" >&2
  load "${m#*:}" 20 > /dev/null
done

exec 3> "$out/floor.csv"
echo "round,member,qps,completed,noerror_pct,user_us_per_query,system_us_per_query,cpu_us_per_query,cpu_vs_unbound" >&3
for r in $(seq 1 "$rounds"); do
  base=""
  for m in unbound:$ub_port:$ub_pid shoal:$sh_port:$sh_pid floor:$fl_port:$fl_pid; do
    IFS=: read -r name port pid <<< "$m"
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    result=$(load "$port" "$seconds")
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    q=$(awk '/Queries completed/ {print $3}' <<< "$result")
    qps=$(awk '/Queries per second/ {printf "%.0f", $4}' <<< "$result")
    ok=$(awk '/NOERROR/ {for (i = 1; i <= NF; i++) if ($i == "NOERROR") { v = $(i + 2); gsub(/[(%)]/, "", v); print v }}' <<< "$result")
    row=$(awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v q="$q" -v t="$tck" \
      'BEGIN { printf "%.3f,%.3f,%.3f", u * 1e6 / t / q, s * 1e6 / t / q, (u + s) * 1e6 / t / q }')
    cpu=${row##*,}
    [ -z "$base" ] && base=$cpu
    echo "$r,$name,$qps,$q,${ok:-0},$row,$(awk -v c="$cpu" -v b="$base" 'BEGIN { printf "%.2f", c / b }')" >&3
    echo "floor: round $r/$rounds $name: $qps QPS, $cpu us per query" >&2
  done
done
exec 3>&-
java -cp "$jar" "$here/FloorChart.java" "$out/floor.csv" "$out/floor.png"
echo "floor: $out/floor.csv and $out/floor.png" >&2

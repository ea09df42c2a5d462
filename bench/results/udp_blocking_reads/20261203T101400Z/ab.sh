#!/bin/bash
# Alternating runs of two shoal jars on one node answering one local-data name over UDP:
# saturated (dnsperf -c 8 -q 200 -T 1) and paced (-Q 30000), 12 s each after a 10 s warm-up,
# the process's user+system CPU over each measured run divided by the queries completed.
#   ab.sh BEFORE.jar AFTER.jar [ROUNDS] > results.csv
# Needs dnsperf and dig; listens on 127.0.0.1:45353.
set -u
before=$1 after=$2 rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
cp "$here/n.conf" "$work/"
for i in $(seq 1 2000); do echo "hit.test A"; done > "$work/q.txt"
cd "$work"
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
tck=$(getconf CLK_TCK)
echo "round,jar,mode,qps,completed,cpu_ticks,cpu_us_per_query"
for round in $(seq 1 "$rounds"); do
  for v in before after; do
    jar=$before; [ $v = after ] && jar=$after
    java -Xms512m -Xmx512m -jar "$jar" serve --config n.conf > "server-$v.log" 2>&1 &
    pid=$!
    for i in $(seq 1 100); do dig +time=1 +tries=1 @127.0.0.1 -p 45353 hit.test A +short 2>/dev/null | grep -q 192.0.2.1 && break; sleep 0.2; done
    dnsperf -s 127.0.0.1 -p 45353 -d q.txt -c 8 -q 200 -T 1 -l 10 > /dev/null 2>&1
    for mode in sat paced; do
      extra=""; [ $mode = paced ] && extra="-Q 30000"
      c0=$(cpu $pid)
      out=$(dnsperf -s 127.0.0.1 -p 45353 -d q.txt -c 8 -q 200 -T 1 -l 12 $extra 2>&1)
      c1=$(cpu $pid)
      q=$(echo "$out" | awk '/Queries completed/ {print $3}')
      qps=$(echo "$out" | awk '/Queries per second/ {print $4}')
      echo "$round,$v,$mode,$qps,$q,$((c1 - c0)),$(echo "($c1-$c0)*1000000/$tck/$q" | bc -l | cut -c1-6)"
    done
    kill $pid; wait $pid 2>/dev/null
  done
done

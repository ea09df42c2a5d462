#!/usr/bin/env bash
# What an idle node holds when started as bin/shoal starts it: RSS after it settles, start-up
# time, and the JVM's own accounting. No load: quick, needs no quiet host beyond no build running.
#
#   bench/footprint/idle.sh OUT_DIR ROUNDS 'NAME=JAR [ENV=VALUE ...]' ...
#
# Each member is a shoal.jar started by this repository's bin/shoal (a copy of it beside the jar in
# a scratch tree, so `bin/shoal serve` runs the jar given, with the JVM options bin/shoal passes),
# with the environment given after the jar (e.g. SHOAL_CDS=off, or JDK_JAVA_OPTIONS=... to add
# JVM options to every java bin/shoal starts; quote a value that holds spaces, as in
# 'c1=JAR JDK_JAVA_OPTIONS="-XX:TieredStopAtLevel=1 -Xss512k"'). The node runs the shipped configuration, only the
# addresses changed (DNS on a free loopback port, an upstream Unbound on 127.0.0.1 serving 2,048
# names of bench.test, the metrics and admin endpoints on ports the OS picks; DNSSEC validation
# off, the upstream being unsigned).
# First, one start of each member that is not measured (bin/shoal may write files at a first
# start: the class-data archive), asked the 20 names and stopped: first.csv has its start time and
# how long it took to stop.
# Then each round starts each member afresh, in turn, ROUNDS rounds, and:
#   1. times the start (from bin/shoal's exec to the first answer, dig every 0.1 s, 120 s at most);
#   2. asks 20 names twice;
#   3. reads VmRSS every 2 s, and once IDLE_AT seconds (default 40) have passed since the queries
#      (40: the 30 s periodic collection and C-heap trim have run once) waits until it moved less
#      than 1 MiB over 20 s, IDLE_AT + 140 s at most (settled=no then): idle_rss_kib is the last
#      reading (and its anonymous and file-backed parts, and the proportional share, PSS,
#      counting shared file pages once).
# Then one more start of each member with -XX:NativeMemoryTracking=detail (several MiB of its
# own) and -Xlog:class+load gives nmt_<member>.txt (NMT summary after it settled),
# resident_<member>.txt (what is in RAM by what holds it: bench/footprint/resident.py on NMT's
# detail and /proc/PID/smaps) and classes_<member>.txt (classes loaded, by package and by where
# they were loaded from).
# A member whose environment has LAYER=jvm, akka or kamon is not a node but StackFloor (beside
# this script, compiled against its jar): a JVM started with the options bin/shoal would pass that
# member's node, holding only the JVM, Akka's actor system or that and Kamon as a node sets them up,
# and nothing of the resolver; it counts as started when it prints that it holds its layer, and is
# asked nothing.
# OUT_DIR/idle.csv has a row per member and round, OUT_DIR/summary.txt medians and spreads.
# Needs unbound, dig and jcmd; stops only what it started. About 1.5 minutes a start.
set -euo pipefail
if [[ $# -lt 3 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
mkdir -p "$1"; out=$(realpath "$1"); rounds=$2; shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd); from=$PWD
# shellcheck source=../lib/scratch.sh
source "$here/../lib/scratch.sh"

# shellcheck source=../lib/cached_names.sh
source "$here/../lib/cached_names.sh"

members=(); declare -A envs layers
for spec in "$@"; do
  name=${spec%%=*}; words=(); env_of=""
  mapfile -t words < <(xargs -n1 printf '%s\n' <<< "${spec#*=}") # the jar, then VAR=VALUE words, quotes honoured
  for w in "${words[@]:1}"; do
    if [[ $w =~ ^LAYER=([a-z]+)$ ]]; then layers[$name]=${BASH_REMATCH[1]}; else env_of+="$w"$'\n'; fi
  done
  jar=$(cd "$from" && realpath "${words[0]}") # the scratch directory is the current one from here on
  shoal_tree "tree-$name" "$jar"
  members+=("$name"); envs[$name]=$env_of
  echo "$name: $jar ${env_of//$'\n'/ }${layers[$name]:+(StackFloor ${layers[$name]})}"
done > "$out/members.txt"
# java as bin/shoal finds it when asked to start a node: prints the options it was given before
# -jar, one per line, and starts nothing (anything else bin/shoal runs, the real java runs)
mkdir -p shim floor
printf '%s\n' '#!/usr/bin/env bash' \
  'if [[ " $* " == *" serve "* ]]; then for a in "$@"; do [[ $a == -jar ]] && exit 0; echo "$a"; done; fi' \
  "exec $(command -v java) \"\$@\"" > shim/java
chmod +x shim/java
for m in "${members[@]}"; do
  if [[ -n ${layers[$m]:-} ]]; then
    javac -d floor -cp "tree-$m/target/shoal.jar" "$here/StackFloor.java"; break
  fi
done

start() { # MEMBER [EXTRA JVM OPTIONS]: starts it, waits until it is up; sets $pid and $start_ms
  local t0 own="" kv; t0=$(date +%s%N)
  local env_of=()
  [[ -n ${envs[$1]} ]] && mapfile -t env_of <<< "${envs[$1]%$'\n'}"
  if [[ -n ${2:-} ]]; then # the extra options go after the member's own JDK_JAVA_OPTIONS, not instead
    for kv in "${env_of[@]}"; do [[ $kv == JDK_JAVA_OPTIONS=* ]] && own=${kv#JDK_JAVA_OPTIONS=}; done
    env_of+=("JDK_JAVA_OPTIONS=${own:+$own }$2")
  fi
  if [[ -n ${layers[$1]:-} ]]; then
    local jvm_opts; mapfile -t jvm_opts < <(PATH="$work/shim:$PATH" "tree-$1/bin/shoal" serve --config shoal.conf)
    env "${env_of[@]}" java "${jvm_opts[@]}" -cp "floor:tree-$1/target/shoal.jar" io.shoal.server.StackFloor \
      "${layers[$1]}" 900 > "shoal-$1.log" 2>&1 &
  else
    env "${env_of[@]}" "tree-$1/bin/shoal" serve --config shoal.conf > "shoal-$1.log" 2>&1 &
  fi
  pid=$!; pids+=($pid)
  for _ in $(seq 1 1200); do
    if up "$1"; then
      start_ms=$(( ($(date +%s%N) - t0) / 1000000 )); return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "idle: $1 did not start (a node answers; a StackFloor prints that it holds its layer)" >&2
  cat "shoal-$1.log" >&2; return 1
}
up() { if [[ -n ${layers[$1]:-} ]]; then grep -q '^ready' "shoal-$1.log"; else answers "$sh_port"; fi; }
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; }
ask_a_few() { [[ -n ${layers[$1]:-} ]] && return 0; for _ in 1 2; do for i in $(seq 0 19); do dig +time=2 +tries=1 @127.0.0.1 -p "$sh_port" "n$i.bench.test" A +short > /dev/null || true; done; done; }
status() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
settle() { # waits as step 3 says; sets $settled
  local t0=$SECONDS readings=() n
  settled=no
  local at=${IDLE_AT:-40}
  while (( SECONDS - t0 < at + 140 )); do
    sleep 2; readings+=("$(status "$pid" VmRSS)"); n=${#readings[@]}
    if (( SECONDS - t0 >= at && n >= 11 )); then
      local window=("${readings[@]: -11}")
      local lo hi; lo=$(printf '%s\n' "${window[@]}" | sort -n | head -1); hi=$(printf '%s\n' "${window[@]}" | sort -n | tail -1)
      if (( hi - lo < 1024 )); then settled=yes; return 0; fi
    fi
  done
}

echo "member,start_ms,stop_ms,files_written" > "$out/first.csv"
for m in "${members[@]}"; do
  start "$m"; ask_a_few "$m"
  t0=$(date +%s%N); stop
  written=$(find "tree-$m/target" -type f ! -name shoal.jar -printf '%P %s bytes; ')
  echo "$m,$start_ms,$(( ($(date +%s%N) - t0) / 1000000 )),${written:-none}" >> "$out/first.csv"
done
echo "round,member,start_ms,idle_rss_kib,rss_anon_kib,rss_file_kib,pss_kib,threads,settled" > "$out/idle.csv"
for r in $(seq 1 "$rounds"); do
  for m in "${members[@]}"; do
    start "$m"; ask_a_few "$m"; settle
    row="$r,$m,$start_ms,$(status $pid VmRSS),$(status $pid RssAnon),$(status $pid RssFile),$(awk '$1 == "Pss:" {print $2}' "/proc/$pid/smaps_rollup"),$(status $pid Threads),$settled"
    echo "$row" >> "$out/idle.csv"; echo "idle: $row" >&2
    stop
  done
done

for m in "${members[@]}"; do
  start "$m" "-XX:NativeMemoryTracking=detail -Xlog:class+load=info:file=$work/classes-$m.log"; ask_a_few "$m"; settle
  jcmd "$pid" VM.native_memory summary > "$out/nmt_$m.txt"
  jcmd "$pid" VM.native_memory detail > "nmt-detail-$m.txt"; cat "/proc/$pid/smaps" > "smaps-$m.txt"
  echo "VmRSS $(status $pid VmRSS) kB, Threads $(status $pid Threads), settled $settled" >> "$out/nmt_$m.txt"
  python3 "$here/resident.py" "nmt-detail-$m.txt" "smaps-$m.txt" > "$out/resident_$m.txt"
  stop
  { echo "classes loaded: $(grep -c ' source: ' "classes-$m.log")"
    echo; echo "by where from:"
    sed -n 's/.* source: \(.*\)$/\1/p' "classes-$m.log" | sed 's/^jar:.*/the jar/; s/^jrt:.*/the JDK (jrt)/; s/^file:.*/the jar/' \
      | sort | uniq -c | sort -rn
    echo; echo "by package (first three parts):"
    sed -n 's/^\[[^]]*\]\[[^]]*\]\[[^]]*\] \([^ ]*\) source: .*/\1/p' "classes-$m.log" \
      | awk -F. '{ n = NF - 1; if (n > 3) n = 3; p = $1; for (i = 2; i <= n; i++) p = p "." $i; print p }' \
      | sort | uniq -c | sort -rn | awk 'NR <= 60'
  } > "$out/classes_$m.txt"
done

python3 - "$out" > "$out/summary.txt" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/idle.csv")))
members = list(dict.fromkeys(r["member"] for r in rows))
print("member      idle RSS MiB: median (min-max; by round)      PSS MiB: median (min-max)   start s: median (min-max)   settled")
for m in members:
    rs = [r for r in rows if r["member"] == m]
    rss = [int(r["idle_rss_kib"]) / 1024 for r in rs]
    st = [int(r["start_ms"]) / 1000 for r in rs]
    pss = [int(r["pss_kib"]) / 1024 for r in rs]
    print(f"{m:<11} {statistics.median(rss):6.1f} ({min(rss):.1f}-{max(rss):.1f}; "
          f"{', '.join(f'{x:.1f}' for x in rss)})    {statistics.median(pss):6.1f} ({min(pss):.1f}-{max(pss):.1f})"
          f"    {statistics.median(st):5.2f} ({min(st):.2f}-{max(st):.2f})"
          f"    {sum(r['settled'] == 'yes' for r in rs)}/{len(rs)}")
for r in csv.DictReader(open(sys.argv[1] + "/first.csv")):
    print(f"first start of {r['member']}: answered after {int(r['start_ms']) / 1000:.2f} s, stopped in "
          f"{int(r['stop_ms']) / 1000:.2f} s; files written beside the jar: {r['files_written']}")
PY
cat "$out/summary.txt"

#!/usr/bin/env bash
# Keeps shoal's nodes and their load generators on separate cores while a study runs:
#
#   bench/pin_cores/pin_cores.sh NODE_CPUS LOAD_CPUS SECONDS &
#   bench/study cluster_churn_paced_pinned
#
# Every 200 ms, for at most SECONDS, every `shoal.jar serve` process (all its threads) is pinned to
# NODE_CPUS and every dnsperf and knotd process, and the study runner itself, to LOAD_CPUS
# (taskset lists, e.g. 0 and 1). A thread a pinned process starts later inherits its pinning. Run as
# the user that runs the study. It pins only processes of those names; it starts and stops nothing.
set -euo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: $0 NODE_CPUS LOAD_CPUS SECONDS" >&2
  exit 2
fi
node_cpus=$1 load_cpus=$2 seconds=$3
declare -A pinned=()
pin() { # pid cpus what
  if [[ -z "${pinned[$1]:-}" ]] && taskset -a -p -c "$2" "$1" >/dev/null 2>&1; then
    pinned[$1]=1
    echo "pin_cores: $3 $1 on CPU $2"
  fi
}
end=$((SECONDS + seconds))
for ((i = 0; i < seconds * 5 && SECONDS < end; i++)); do
  for pid in $(pgrep -f 'shoal\.jar serve' || true); do pin "$pid" "$node_cpus" node; done
  for pid in $(pgrep -f 'shoal\.jar study' || true); do pin "$pid" "$load_cpus" "study runner"; done
  for pid in $(pgrep -x dnsperf || true) $(pgrep -x knotd || true); do pin "$pid" "$load_cpus" load; done
  sleep 0.2
done

# Sourced by the bench scripts: a scratch directory to run in ($work, the current directory from
# here on), removed at exit together with every process whose PID the script adds to pids.
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

# Sourced by the bench scripts: a scratch directory to run in ($work, the current directory from
# here on), removed at exit together with every process whose PID the script adds to pids.
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
# shoal_tree DIR JAR: makes DIR a tree whose bin/shoal (this repository's) runs JAR as though it had
# built it (the jar newer than the tree's empty sources), with the JVM options bin/shoal passes.
shoal_tree() {
  mkdir -p "$1/bin" "$1/src/main" "$1/conf" "$1/target"; touch "$1/pom.xml"
  cp "$(dirname "${BASH_SOURCE[0]}")/../../bin/shoal" "$1/bin/shoal"
  sleep 1; cp "$(realpath "$2")" "$1/target/shoal.jar"
}

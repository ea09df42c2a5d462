# Sourced by bench/ab/hits.sh and bench/footprint/footprint.sh: the load both measure shoal under.
# In a fresh directory (the caller's cwd, $work) it writes and starts:
#   - an upstream Unbound on 127.0.0.1:$up_port serving n0..n2047.bench.test A as local data,
#   - shoal.conf: the shipped configuration with only the addresses changed (DNS on
#     127.0.0.1:$sh_port, that upstream, metrics and admin on ports the OS picks) and DNSSEC
#     validation off, the upstream being unsigned,
#   - queries.txt: the 2,048 names over and over, for dnsperf.
# Expects $work and the array pids (the caller's cleanup stops them); sets up_port and sh_port.
# answers PORT: does the server on 127.0.0.1:PORT answer n0.bench.test with the upstream's data
# (one query, 1 s)? The callers poll it, each with its own bound.
answers() { dig +time=1 +tries=1 @127.0.0.1 -p "$1" n0.bench.test A +short 2>/dev/null | grep -q 192.0.2.1; }
free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
up_port=$(free_port); sh_port=$(free_port)
for i in $(seq 0 2047); do echo "  local-data: \"n$i.bench.test. 3600 A 192.0.2.1\""; done > names.conf
printf '%s\n' "server:" "  interface: 127.0.0.1@$up_port" "  do-ip6: no" '  username: ""' '  chroot: ""' \
  '  pidfile: ""' "  use-syslog: no" '  logfile: ""' "  num-threads: 1" '  local-zone: "test." nodefault' \
  '  local-zone: "bench.test." static' "  include: \"$work/names.conf\"" \
  "remote-control:" "  control-enable: no" > upstream.conf
cat > shoal.conf <<CONF
shoal {
  listen { udp = "127.0.0.1:$sh_port", tcp = "127.0.0.1:$sh_port" }
  upstreams.default.servers = ["127.0.0.1:$up_port"]
  dnssec.validation = off
  admin { port = 0, token_file = "$work/admin.token" }
  metrics.prometheus.port = 0
}
CONF
awk 'BEGIN { for (r = 0; r < 1000; r++) for (i = 0; i < 2048; i++) print "n" i ".bench.test A" }' > queries.txt
unbound -d -c upstream.conf > upstream.log 2>&1 & pids+=($!)

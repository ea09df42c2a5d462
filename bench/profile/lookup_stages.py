#!/usr/bin/env python3
"""Where a cluster study's owner lookups spent their time, per member and round.

Usage: bench/profile/lookup_stages.py RESULT_DIR   (a cluster study's run directory, with raw.tar.xz)

For each member (and round) it adds up the nodes' Prometheus scrapes taken before and after the
measured run (members/.../node-N/stats-before.txt and stats-after.txt in raw.tar.xz) and prints,
as the bucket bounds they fall in (at most that long) and as means:
  - lookup:   shoal_cluster_remote_lookup_seconds, the asking node's round trip of an owner lookup
  - query q:  shoal_udp_queue_seconds{datagram="query"}, how long a query (a client's, or another
              node's owner lookup) waited in a listening socket's queue for its reader
  - reply q:  shoal_udp_queue_seconds{datagram="response"}, how long an owner's answer waited in
              the asking node's socket queue
the datagrams a socket read found, on average (shoal_udp_received_total over shoal_udp_reads_total;
'-' for builds before the reads were counted), and, from the nodes' cgroup counters (quota-before/after.txt), the CFS periods throttled, and from
dnsperf's per-query lines the clients' percentiles. An owner lookup's round trip is the question's
wait at the owner (query q), the owner's read-answer-send, the answer's wait at the asking node
(reply q), and the kernel's loopback hops between them.
"""
import io
import re
import sys
import tarfile
from collections import defaultdict

SERIES = re.compile(r'^([a-z_]+)\{([^}]*)\}\s+(\S+)$')


def parse(text):
    out = {}
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            out[(m.group(1), m.group(2))] = float(m.group(3))
    return out


def labels(s):
    return dict(re.findall(r'(\w+)="([^"]*)"', s))


def histogram(before, after, name, want):
    """Bucket counts (le -> count) over the run and the sum, every node added up."""
    buckets = defaultdict(float)
    total = 0.0
    for (n, l), v in after.items():
        lab = labels(l)
        if not all(lab.get(k) == w for k, w in want.items()):
            continue
        d = v - before.get((n, l), 0.0)
        if n == name + '_bucket':
            buckets[float(lab['le'])] += d
        elif n == name + '_sum':
            total += d
    return dict(sorted(buckets.items())), total


def quantile(buckets, q):
    if not buckets:
        return None
    count = max(buckets.values())
    if count <= 0:
        return None
    for le, c in buckets.items():
        if c >= q * count:
            return le
    return float('inf')


def ms(v):
    if v is None:
        return '-'
    if v == float('inf'):
        return '>10 s'
    return ('%.3g' % (v * 1000))


def stage(before, after, name, want):
    b, s = histogram(before, after, name, want)
    n = max(b.values()) if b else 0
    if n <= 0:
        return '-', '-'
    qs = '≤ %s / ≤ %s / ≤ %s' % (ms(quantile(b, .5)), ms(quantile(b, .9)), ms(quantile(b, .99)))
    return qs, '%.3f' % (s / n * 1000)


def per_read(before, after):
    def delta(name):
        return sum(v - before.get(k, 0.0) for k, v in after.items() if k[0] == name)
    reads = delta('shoal_udp_reads_total')
    return '%.1f' % (delta('shoal_udp_received_total') / reads) if reads > 0 else '-'


def main(run):
    tar = tarfile.open(run.rstrip('/') + '/raw.tar.xz')
    files = {m.name: m for m in tar.getmembers() if m.isfile()}

    def read(name):
        return tar.extractfile(files[name]).read().decode('utf-8', 'replace') if name in files else ''

    groups = defaultdict(list)
    for name in files:
        m = re.match(r'members/([^/]+)/(?:(round-\d+)/)?(node-\d+)/stats-after\.txt$', name)
        if m:
            groups[(m.group(1), m.group(2) or '')].append(name.rsplit('/', 1)[0])
    print('| member | round | lookups | lookup p50 / p90 / p99 ms | mean ms | query q p50 / p90 / p99 ms | mean ms '
          '| reply q p50 / p90 / p99 ms | mean ms | datagrams per read | periods throttled | clients p50 / p90 / p99 ms |')
    print('|---|---|---:|---|---:|---|---:|---|---:|---:|---|---|')
    for (member, rnd), nodes in sorted(groups.items()):
        before, after = defaultdict(float), defaultdict(float)
        throttled, periods, clients = [], [], []
        for d in sorted(nodes):
            for k, v in parse(read(d + '/stats-before.txt')).items():
                before[k] += v
            for k, v in parse(read(d + '/stats-after.txt')).items():
                after[k] += v
            qb = dict(re.findall(r'(\w+) (\d+)', read(d + '/quota-before.txt')))
            qa = dict(re.findall(r'(\w+) (\d+)', read(d + '/quota-after.txt')))
            if 'nr_periods' in qa:
                periods.append(int(qa['nr_periods']) - int(qb.get('nr_periods', 0)))
                throttled.append(int(qa['nr_throttled']) - int(qb.get('nr_throttled', 0)))
            p = re.search(r'p50 ([\d.]+) ms, p90 ([\d.]+) ms, p99 ([\d.]+) ms', read(d + '/dnsperf.txt'))
            if p:
                clients.append('/'.join(p.groups()))
        # nodes are labelled apart, so summing the scrapes keeps each series whole
        lk, lk_mean = stage(before, after, 'shoal_cluster_remote_lookup_seconds', {})
        qq, qq_mean = stage(before, after, 'shoal_udp_queue_seconds', {'datagram': 'query'})
        rq, rq_mean = stage(before, after, 'shoal_udp_queue_seconds', {'datagram': 'response'})
        b, _ = histogram(before, after, 'shoal_cluster_remote_lookup_seconds', {})
        n = int(max(b.values())) if b else 0
        thr = ', '.join('%d/%d' % t for t in zip(throttled, periods)) or '-'
        print('| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            member, rnd.replace('round-', '') or '1', n, lk, lk_mean, qq, qq_mean, rq, rq_mean,
            per_read(before, after), thr,
            '; '.join(clients) or '-'))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

package io.shoal.ingress;

import io.shoal.access.AccessControl;
import io.shoal.config.ServeStaleSettings;
import io.shoal.local.LocalData;
import io.shoal.loop.LoopDetector;
import io.shoal.policy.ResponsePolicy;
import io.shoal.profile.ProfileTable;
import io.shoal.querylog.QueryLog;
import io.shoal.ratelimit.MissBudget;
import io.shoal.wire.ReplyPolicy;
import java.time.Duration;

/**
 * The part of the query path a reload replaces whole: the {@link Ingress} reads it once per query,
 * so a query is answered by one plan from start to end, and the next query by the new one.
 * Caches, sockets, workers and the cluster are not in it: they stay across a reload.
 *
 * @param profiles the profiles, with their caches (the same caches in every plan) and upstreams
 * @param access which clients are served
 * @param missBudget how many misses a second each client prefix and zone may send upstream
 * @param replies the chaos-class answers and the largest UDP reply
 * @param local local data, or null when none is configured
 * @param policy the response policy (blocklists), or null when none is configured
 * @param queryLog the query logs' writer, or null when both logs are off
 * @param loops the forwarding-loop probes of the upstream groups, whose return the ingress watches for
 * @param serveStale serve-stale, as the workers apply it
 * @param prefetch whether hits near expiry are fetched again
 * @param streamGuard how long a stream's query may wait for its worker before it gets SERVFAIL:
 *     longer than any upstream deadline, so it only fires if a worker lost the query
 */
public record QueryPlan(
    ProfileTable profiles, AccessControl access, MissBudget missBudget, ReplyPolicy replies, LocalData local, ResponsePolicy policy,
    QueryLog queryLog, LoopDetector loops, ServeStaleSettings serveStale, boolean prefetch, Duration streamGuard) {}

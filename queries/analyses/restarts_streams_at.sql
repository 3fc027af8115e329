-- What the gateway log saw of each restart, from the attempts sent to that replica: a
-- replica key is a pod name or pod IP, matched to attempts.replica as it is or without a
-- ":port" suffix. Per restart id, with its bracket [lo, hi] (epoch s, hi already including
-- any termination grace) and the tolerance $tol_s:
--   cut       attempts in flight in the bracket that ended not delivered (and not shed)
--             between lo - tol and hi + tol: the streams the restart killed;
--   finished  attempts in flight at lo that were delivered: streams that drained;
--   last_sent the last attempt sent before lo; first_served the first delivered attempt sent
--             after hi (the replica serving again).
-- params: ids, keys, los, his, tol_s
with r as (
    select unnest($ids) as id, unnest($keys) as key, unnest($los) as lo, unnest($his) as hi
),
hits as (
    select distinct r.id, r.lo, r.hi, a.call_id, a.attempt, a.t_sent, a.t_end, a.outcome
    from r
    join attempts a
        on a.replica = r.key or split_part(a.replica, ':', 1) = r.key
)
select
    id,
    count(*) filter (
        where outcome not in ('delivered', 'shed')
            and t_sent < hi and t_end >= lo - $tol_s and t_end <= hi + $tol_s
    ) as cut,
    avg(t_end - t_sent) filter (
        where outcome not in ('delivered', 'shed')
            and t_sent < hi and t_end >= lo - $tol_s and t_end <= hi + $tol_s
    ) as cut_mean_age_s,
    count(*) filter (where outcome = 'delivered' and t_sent < lo and t_end >= lo) as finished,
    max(t_sent) filter (where t_sent < lo) as last_sent,
    min(t_sent) filter (where outcome = 'delivered' and t_sent > hi) as first_served
from hits
group by id
order by id

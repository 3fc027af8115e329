-- What the gateway log saw of each restart, from the attempts sent to that replica: a
-- replica key is a pod name or pod IP, matched to attempts.replica as it is or without a
-- ":port" suffix (two equality joins, so DuckDB hashes them). Per restart id, with its
-- bracket [lo, hi] (epoch s, hi already including any termination grace) and the tolerance
-- $tol_s:
--   cut          attempts in flight in the bracket that ended not delivered (and not shed)
--                between lo - tol and hi + tol: the streams the restart killed;
--   finished     attempts in flight at lo that were delivered: streams that drained;
--   first_served the first delivered attempt sent after hi (the replica serving again).
-- params: ids, keys, los, his, tol_s
with r as (
    select unnest($ids) as id, unnest($keys) as key, unnest($los) as lo, unnest($his) as hi
),
a as (
    select
        call_id, attempt, t_sent, t_end, outcome, replica,
        split_part(replica, ':', 1) as host
    from attempts
    where replica is not null
),
hits as (
    select r.id, r.lo, r.hi, a.call_id, a.attempt, a.t_sent, a.t_end, a.outcome
    from r join a on a.replica = r.key
    union
    select r.id, r.lo, r.hi, a.call_id, a.attempt, a.t_sent, a.t_end, a.outcome
    from r join a on a.host = r.key
)
select
    id,
    count(*) filter (
        where outcome not in ('delivered', 'shed')
            and t_sent < hi and t_end >= lo - $tol_s and t_end <= hi + $tol_s
    ) as cut,
    count(*) filter (where outcome = 'delivered' and t_sent < lo and t_end >= lo) as finished,
    min(t_sent) filter (where outcome = 'delivered' and t_sent > hi) as first_served
from hits
group by id
order by id

-- The streams each stuck episode caught (the `stuck` analysis): per episode (lists $ep_ids,
-- $ep_replicas, $ep_starts, $ep_ends, epoch seconds), the proxy attempts on that replica
-- (attempts.replica equal to the episode's) in flight during it (t_sent < end and
-- t_end > start), how many of them did not end delivered, and whether any attempt of the
-- log names that replica at all (false: the gateway names replicas differently, the count
-- cannot be matched).
-- params: ep_ids, ep_replicas, ep_starts, ep_ends
with ep as (
    select unnest($ep_ids) as id, unnest($ep_replicas) as replica, unnest($ep_starts) as a,
           unnest($ep_ends) as b
),
named as (
    select distinct replica from attempts where replica in (select replica from ep)
)
select ep.id,
       count(t.call_id) as caught,
       count(t.call_id) filter (where t.outcome <> 'delivered') as caught_failed,
       ep.replica in (select replica from named) as replica_named
from ep
left join attempts t on t.replica = ep.replica and t.t_sent < ep.b and t.t_end > ep.a
group by ep.id, ep.replica
order by ep.id

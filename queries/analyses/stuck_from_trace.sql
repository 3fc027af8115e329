-- Stuck episodes from the engine trace (the `stuck` analysis, when the metrics lack the
-- running gauge or the generation-token counter): per replica, the stretches within
-- [$t_from, $t_to] during which some execution was running and no token was produced, lasting
-- at least $range_s (the stuck_replica rule's range).
--   running     an execution from its first `scheduled` to its first `finished` / `aborted`,
--               or, with neither, to its last event or step (the trace shows no more);
--   token times `first_token` events and the t_done of steps with decode tokens;
--   a stretch   from the later of the last token time and the start of the running span
--               (overlapping executions merged) to the earlier of the next token time and
--               its end; `executions`: those running at some time within it.
-- params: t_from, t_to, range_s
with ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'scheduled') as a,
           min(t) filter (where event in ('finished', 'aborted')) as b,
           max(t) as t_last_event
    from events group by all
),
last_step as (
    select coalesce(replica, '') as rk, execution_id, max(t_done) as t_last_step
    from steps group by all
),
run as (
    select ex.rk, ex.execution_id, ex.a,
           coalesce(ex.b, greatest(ex.t_last_event, ls.t_last_step)) as b
    from ex left join last_step ls using (rk, execution_id)
    where ex.a is not null
),
flagged as (
    select *, case when a > max(b) over (partition by rk order by a, b, execution_id
                                         rows between unbounded preceding and 1 preceding)
                   then 1 else 0 end as new
    from run
),
isl as (
    select *, sum(new) over (partition by rk order by a, b, execution_id
                             rows unbounded preceding) as island
    from flagged
),
comp as (select rk, island, min(a) as a, max(b) as b from isl group by all),
tok as (
    select coalesce(replica, '') as rk, t from events where event = 'first_token'
    union all
    select coalesce(replica, '') as rk, t_done as t from steps where decode_tokens > 0
),
marks as (
    select rk, t from tok where rk in (select rk from comp)
    union all
    select distinct rk, -1e300 as t from comp
),
gaps as (select rk, t as t_prev, lead(t) over (partition by rk order by t) as t_next from marks),
stretch as (
    select c.rk, greatest(g.t_prev, c.a, $t_from) as t_start,
           least(coalesce(g.t_next, c.b), c.b, $t_to) as t_end
    from comp c join gaps g
      on g.rk = c.rk and g.t_prev < c.b and coalesce(g.t_next, c.b) > c.a
)
select s.rk as replica, s.t_start, s.t_end,
       (select count(*) from run r where r.rk = s.rk and r.a < s.t_end and r.b > s.t_start)
           as executions
from stretch s
where s.t_end - s.t_start >= $range_s
order by s.t_start, s.rk

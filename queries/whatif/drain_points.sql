-- The engine's backlog points that "drained after" reads (relplan/analyses/drain.py
-- `measure`, for the what-if's figures: relplan/whatif/figures.py `_drained`), from the
-- lifecycle events as queries/analyses/backlog_trace_changes.sql has them (+1 at an
-- execution's first `arrived`, -1 at its first `finished`, `aborted` or `rejected`; one point
-- per distinct time, its level the running sum of the changes: whole numbers, exact), but
-- only these of its ~20,000 a replay has: the first point; every point before $a (the
-- overload's start: the pre-pulse mean reads those alone); and from $b (the overload's end)
-- on, each point whose level is below every level since $b, the only ones that can be the
-- first at or below the pre-pulse level. `executions`, `no_terminal` (as
-- backlog_trace_changes.sql) and `finished` (finished events, as
-- analyses/lifecycle_event_counts.sql) are repeated on every row. No row: no lifecycle event.
-- Columns: t, level, executions, no_terminal, finished.
-- params: a, b
with ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'arrived') as ta,
           min(t) filter (where event in ('finished', 'aborted', 'rejected')) as te,
           count(*) filter (where event = 'finished') as finished
    from events group by all
),
counts as (
    select count(*) filter (where ta is not null) as executions,
           count(*) filter (where ta is not null and te is null) as no_terminal,
           coalesce(sum(finished), 0) as finished
    from ex
),
changes as (
    select ta as t, 1 as delta from ex where ta is not null
    union all
    select te, -1 from ex where ta is not null and te is not null
),
points as (
    select t, sum(delta) as delta from changes group by t
),
levels as (
    select t,
           (sum(delta) over (order by t rows between unbounded preceding and current row))::double
               as level,
           row_number() over (order by t) as n
    from points
),
marked as (
    select t, level, n,
           min(case when t >= $b then level end)
               over (order by t rows between unbounded preceding and 1 preceding) as low_before
    from levels
)
select m.t, m.level, k.executions, k.no_terminal, k.finished
from marked m cross join counts k
where m.n = 1 or m.t < $a or (m.t >= $b and (m.low_before is null or m.level < m.low_before))
order by m.t
